"""manager/server.py: the manager refuses to serve beyond this machine without a token."""

from __future__ import annotations

import os
import subprocess
import sys




def test_manager_refuses_a_public_address_without_a_token(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "manager", "--config", "small",
                           "--host", "0.0.0.0", "--run-dir", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "MELEE_AGENT_TOKEN"})
    assert proc.returncode == 2 and "no token" in proc.stderr and "0.0.0.0" in proc.stderr
    assert not (tmp_path / "run").exists()

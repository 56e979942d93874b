"""Melee's hit formulas against hand computations written out here, and the properties the arena
relies on (elementwise on any shape, no host synchronisation)."""

from __future__ import annotations

import doctest
import math

import pytest
import torch

from melee_agent.arena import knockback as kb


def t(*v):
    return torch.tensor(v if len(v) > 1 else v[0], dtype=torch.float32)


def test_regular_knockback_fox_upsmash_on_fox_at_0():
    # p = floor(0) + 18 = 18, d = 18, w = 75, g = 112, b = 30
    # p/10 + p*d/20 = 1.8 + 16.2 = 18; * 200/175 = 20.571428; * 1.4 = 28.8; + 18 = 46.8; * 1.12 = 52.416; + 30
    hand = 82.416
    got = kb.knockback(t(18.0), 18.0, 75.0, 112.0, 30.0)
    assert float(got) == pytest.approx(hand, abs=1e-4)
    assert float(kb.hitstun(got)) == 32  # floor(32.9664)
    assert float(kb.launch_speed(got)) == pytest.approx(2.47248, abs=1e-5)


def test_stale_hit_uses_unstaled_damage_and_floored_percent():
    # Second fresh-queue upsmash: staled 18 * 0.91 = 16.38 on a victim at 18.0%:
    # p = floor(18.0) + 16.38 = 34.38; d = 18 (unstaled)
    # 3.438 + 34.38 * 18 / 20 = 3.438 + 30.942 = 34.38; * 200/175 * 1.4 = 55.008; + 18 = 73.008; * 1.12 = 81.76896; + 30
    hand = 111.76896
    p = kb.knockback_percent(t(18.0), t(16.38))
    assert float(p) == pytest.approx(34.38, abs=1e-5)
    assert float(kb.knockback(p, 18.0, 75.0, 112.0, 30.0)) == pytest.approx(hand, abs=1e-3)
    assert float(kb.knockback_percent(t(18.9), t(1.0))) == pytest.approx(19.0)  # floor before adding


def test_set_knockback_fox_shine():
    # p -> 10, d -> 80: 10/10 + 10*80/20 = 41; * 200/(75+100) = 46.857; * 1.4 = 65.6; + 18 = 83.6; * 100/100 + 0
    hand = 83.6
    for percent in (0.0, 17.0, 150.0):  # independent of the victim's percent
        assert float(kb.knockback(t(percent), 5.0, 75.0, 100.0, 0.0, 80.0)) == pytest.approx(hand, abs=1e-4)
    # against Marth (w 87): 41 * 200/187 * 1.4 = 61.390; + 18 = 79.390
    assert float(kb.knockback(t(0.0), 5.0, 87.0, 100.0, 0.0, 80.0)) == pytest.approx(41 * 200 / 187 * 1.4 + 18, abs=1e-4)
    assert float(kb.hitstun(t(83.6))) == 33


def test_marth_ftilt_and_tipper_on_fox_at_50():
    # untipped: 9%, bkb 30, kbg 70; p = 50 + 9 = 59: 5.9 + 59*9/20 = 5.9 + 26.55 = 32.45; * 200/175 = 37.0857;
    # * 1.4 = 51.92; + 18 = 69.92; * 0.7 = 48.944; + 30 = 78.944
    assert float(kb.knockback(t(59.0), 9.0, 75.0, 70.0, 30.0)) == pytest.approx(78.944, abs=1e-3)
    # tipper: 13%, bkb 60, kbg 70; p = 63: 6.3 + 63*13/20 = 6.3 + 40.95 = 47.25; * 200/175 = 54.0; * 1.4 = 75.6;
    # + 18 = 93.6; * 0.7 = 65.52; + 60 = 125.52
    assert float(kb.knockback(t(63.0), 13.0, 75.0, 70.0, 60.0)) == pytest.approx(125.52, abs=1e-3)


def test_knockback_cap_and_elementwise_shapes():
    assert float(kb.knockback(t(999.0), 99.0, 60.0, 250.0, 100.0)) == kb.KNOCKBACK_CAP
    p = torch.tensor([[18.0, 17.0], [59.0, 0.0]])
    w = torch.tensor([75.0, 87.0])
    out = kb.knockback(p, torch.tensor([[18.0, 5.0], [9.0, 0.0]]), w, torch.tensor([[112.0, 100.0], [70.0, 100.0]]),
                       torch.tensor([[30.0, 0.0], [30.0, 0.0]]), torch.tensor([[0.0, 80.0], [0.0, 0.0]]))
    assert out.shape == (2, 2)
    assert float(out[0, 0]) == pytest.approx(82.416, abs=1e-3)
    assert float(out[0, 1]) == pytest.approx(41 * 200 / 187 * 1.4 + 18, abs=1e-3)
    assert float(out[1, 1]) == pytest.approx(18.0)  # 0% and 0 damage: (0 + 18) * 1 + 0


def test_hitstun_launch_speed_and_decay():
    assert kb.hitstun(t(41.44, 99.99, 100.0)).tolist() == [16.0, 39.0, 40.0]  # floor(16.576), floor(39.996), 40
    # 2.508 per frame after 0, 1 and 50 frames: 2.508, 2.457, 0 (2.508 - 2.55 < 0)
    got = kb.launch_speed_after(t(2.508), torch.tensor([0.0, 1.0, 50.0]))
    assert got.tolist() == pytest.approx([2.508, 2.457, 0.0], abs=1e-6)
    vx, vy = kb.decay_launch(t(3.0), t(4.0))  # speed 5 -> 4.949 along (0.6, 0.8)
    assert (float(vx), float(vy)) == pytest.approx((0.6 * 4.949, 0.8 * 4.949), abs=1e-5)
    vx, vy = kb.decay_launch(t(0.03), t(0.0))
    assert (float(vx), float(vy)) == (0.0, 0.0)


def test_sakurai_angle_and_launch_velocity():
    ang = kb.launch_angle(t(361.0, 361.0, 361.0, 361.0, 70.0), t(31.9, 32.05, 50.0, 10.0, 10.0),
                          torch.tensor([True, True, True, False, True]))
    assert ang.tolist() == pytest.approx([0.0, 22.0, 44.0, 45.0, 70.0], abs=1e-3)  # 32.05 is half way: 22
    vx, vy = kb.launch_velocity(t(100.0), t(90.0), t(1.0))
    assert (float(vx), float(vy)) == pytest.approx((0.0, 3.0), abs=1e-6)
    vx, vy = kb.launch_velocity(t(100.0), t(45.0), t(-1.0))
    assert (float(vx), float(vy)) == pytest.approx((-3 / math.sqrt(2), 3 / math.sqrt(2)), abs=1e-6)


def test_di_turns_at_most_18_degrees_toward_the_stick():
    # launch at 45 degrees; stick perpendicular up-left (-0.7071, 0.7071): c = 0.7071*0.7071 + 0.7071*0.7071 = 1
    got = kb.di_angle(t(45.0, 45.0, 45.0), t(-math.sqrt(0.5), math.sqrt(0.5), 0.0),
                      t(math.sqrt(0.5), math.sqrt(0.5), 0.0))
    assert got.tolist() == pytest.approx([63.0, 45.0, 45.0], abs=1e-4)  # +18, parallel: 0, neutral: 0


def test_stale_queue():
    q = torch.tensor([[11, 11, 13, 0, 0, 11, 0, 0, 0], [0] * 9, [1, 1, 1, 1, 1, 1, 1, 1, 1]])
    # 0.09 + 0.08 + 0.04 = 0.21 -> 0.79; empty queue -> 1; id 1 never stales
    assert kb.stale_factor(q, torch.tensor([11, 11, 1])).tolist() == pytest.approx([0.79, 1.0, 1.0])
    full = torch.full((9,), 14)
    assert float(kb.stale_factor(full, torch.tensor(14))) == pytest.approx(1 - 0.45)  # all nine slots: 0.55
    pushed = kb.push_stale(torch.zeros(2, 9, dtype=torch.long), torch.tensor([7, 8]), torch.tensor([True, False]))
    assert pushed[0, :2].tolist() == [7, 0] and pushed[1].tolist() == [0] * 9


def test_crouch_cancel_tumble_and_hitlag():
    assert kb.crouch_cancel(t(90.0, 90.0), torch.tensor([True, False])).tolist() == pytest.approx([60.0, 90.0])
    assert kb.tumbles(t(79.99, 80.0)).tolist() == [False, True]
    # 13%: floor(3 + 4.333) = 7; electric 5%: floor(4 * 1.5) = 6; crouching 18%: floor(9 * 2/3) = 6
    got = kb.hitlag(t(13.0, 5.0, 18.0), torch.tensor([False, True, False]), torch.tensor([False, False, True]))
    assert got.tolist() == [7.0, 6.0, 6.0]


def test_no_host_synchronisation_on_meta_tensors():
    """Meta tensors have no values: any .item(), bool() or data-dependent branch would raise."""
    m = torch.empty(4, 2, device="meta")
    b = torch.empty(4, 2, device="meta", dtype=torch.bool)
    k = kb.knockback(kb.knockback_percent(m, m), m, m, m, m, m)
    kb.hitstun(kb.crouch_cancel(k, b))
    kb.launch_velocity(k, kb.di_angle(kb.launch_angle(m, k, b), m, m), m)
    kb.decay_launch(m, m)
    kb.hitlag(m, b, b)
    q = torch.empty(4, 2, 9, device="meta", dtype=torch.long)
    a = torch.empty(4, 2, device="meta", dtype=torch.long)
    kb.push_stale(q, a, b)
    assert kb.stale_factor(q, a).shape == (4, 2)


def test_docstring_examples_run():
    result = doctest.testmod(kb)
    assert result.attempted > 10 and result.failed == 0


@pytest.mark.slow
def test_compiles_as_one_graph():
    def hit(p_before, dmg, stale, w, g, b, s, ang, grounded, facing):
        p = kb.knockback_percent(p_before, dmg * stale)
        k = kb.knockback(p, dmg, w, g, b, s)
        vx, vy = kb.launch_velocity(k, kb.launch_angle(ang, k, grounded), facing)
        return kb.hitstun(k), vx, vy

    args = (t(18.0, 12.0), t(18.0, 5.0), t(1.0, 1.0), t(75.0, 75.0), t(112.0, 100.0), t(30.0, 0.0),
            t(0.0, 80.0), t(80.0, 0.0), torch.tensor([True, True]), t(1.0, -1.0))
    compiled = torch.compile(hit, fullgraph=True)  # fullgraph: a graph break (host sync) raises
    for a, e in zip(compiled(*args), hit(*args)):
        assert torch.allclose(a, e)

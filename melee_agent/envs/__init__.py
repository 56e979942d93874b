"""The environment contract (VecEnv, StepInfo) and what every environment shares: state, actions, rewards; Gymnasium."""

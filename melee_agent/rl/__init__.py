"""The reinforcement-learning core: the Dueling DQN, its replay, the learner and the policies."""

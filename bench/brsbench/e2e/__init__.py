"""bench/train_e2e.py's parts: plans (the samplers), measure (real training steps), summary
(the sync models, throughput, cost-model error, table, plot)."""

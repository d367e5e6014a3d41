"""The training studies (train_e2e, same_shapes, online, sweep) and their parts: plans (the
samplers), measure (real training steps), summary (the sync models, throughput, cost-model
error, table, plot), job (the one-job studies' arguments)."""

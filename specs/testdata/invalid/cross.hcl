# Constraints between attributes are checked once every arm is resolved.
experiment "cross" {
  budget { env_steps = 1000 }
  env "cartpole" {
    latency {
      kind   = "lognormal"
      median = 0               # ERROR: Value out of range
    }
  }
  algorithm "ppo" {
    batch_steps = 512
  }
  pipeline {
    replay_capacity = 256      # ERROR: Replay capacity smaller than batch
  }

  # The base's conflict is inherited here but reported only once, above.
  ablation "inherits" {
    policy { hidden = [32] }
  }
  # This arm introduces its own conflict, so it is reported here.
  ablation "big_chunks" {
    pipeline {
      replay_capacity = 1024
      chunk_steps     = 4096   # ERROR: Chunk larger than replay
    }
  }
}

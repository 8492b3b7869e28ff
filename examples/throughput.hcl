# throughput.hcl: does asynchrony pay off when the simulator is slow?
#
# Each simulator step sleeps for a heavy-tailed (lognormal) time, and a
# quarter of the rollout workers are three times slower than the rest, as in
# real robot simulators. The async base arm lets the trainer consume whatever
# the fast workers produce; the sync ablation waits for every worker before
# each update, so the slowest worker sets its pace. The report compares
# environment steps per second and return against wall-clock time.
#
#   accerl run examples/throughput.hcl
#   accerl run examples/throughput.hcl -var steps=1000000

variable "steps" {
  default     = 200000
  description = "environment steps per run"
}

experiment "throughput" {
  # One seed per arm: throughput varies far less between seeds than return.
  seeds        = [1]
  max_parallel = 2
  baseline     = "sync"

  budget {
    env_steps = var.steps
    # Stop any run after 20 minutes, so a very slow sync arm cannot stall
    # the whole experiment.
    wall_time = "20m"
  }

  env "cartpole" {
    latency {
      # exp(N(ln 5ms, 1.0²)) per step: median 5ms, mean about 8ms, and one
      # step in a hundred longer than about 50ms.
      kind          = "lognormal"
      median        = "5ms"
      sigma         = 1.0
      # 25% of workers (4 of 16) are stragglers, 3x slower.
      slow_fraction = 0.25
      slow_factor   = 3.0
    }
  }

  algorithm "ppo" {
    # 16 workers x 4 envs = 64 environments; 2048 steps per update is 32
    # steps from each.
    batch_steps = 2048
    minibatches = 8
  }

  pipeline {
    mode            = "async"
    workers         = 16
    envs_per_worker = 4
    chunk_steps     = 32
    # Four updates' worth of steps.
    replay_capacity = 8192

    inference {
      # A batch runs once 64 observations wait (one per environment) or
      # after 5ms, whichever comes first.
      max_batch = 64
      max_wait  = "5ms"
    }
  }

  checkpoint {
    every = 25
    keep  = 3
  }

  ablation "sync" {
    pipeline { mode = "sync" }
  }
}

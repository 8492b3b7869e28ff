# Every attribute of the language, each set to a value that differs from its
# default, so a test can tell that each one was read.
variable "steps" {
  default     = 100000
  description = "env steps per run"
}

variable "mode" {
  default = "sync"
}

experiment "full" {
  seeds        = [7, 3, 11]
  max_parallel = 2
  baseline     = "big_net"

  budget {
    env_steps = var.steps
    wall_time = "30m"
  }

  env "pendulum" {
    max_episode_steps = 400
    latency {
      kind          = "lognormal"
      median        = "7ms"
      sigma         = 0.5
      slow_fraction = 0.5
      slow_factor   = 2.0
    }
  }

  policy {
    action     = "tokens"
    hidden     = [32, 16, 8]
    activation = "relu"
    bins       = 128
    init_log_std = -0.5
  }

  algorithm "gipo" {
    learning_rate    = 3e-4
    anneal_lr        = false
    gamma            = 0.98
    gae_lambda       = 0.9
    clip             = 0.1
    value_coef       = 1.0
    entropy_coef     = 0.02
    max_grad_norm    = 1.0
    epochs           = 10
    minibatches      = 3
    batch_steps      = 1000
    norm_adv         = false
    recompute_values = true
    advantage_norm   = "global"
    gipo_sigma       = 0.25
    kl_coef          = 0.1
    lr_schedule      = "cosine"
    warmup_updates   = 5
    sapo_tau_pos     = 0.8
    sapo_tau_neg     = 1.2
    vtrace_rho_bar   = 0.9
    vtrace_c_bar     = 0.95
    clip_value_loss  = false
  }

  pipeline {
    mode            = var.mode
    workers         = 6
    envs_per_worker = 3
    chunk_steps     = 50
    replay_capacity = 5000
    max_staleness   = 4
    lag             = 2
    inference {
      max_batch = 32
      max_wait  = "2ms"
    }
  }

  checkpoint {
    every = 10
    keep  = 5
    heartbeat_timeout = "45s"
  }

  ablation "async" {
    pipeline { mode = "async" }
  }
  ablation "big_net" {
    policy { hidden = [128, 128] }
    algorithm "ppo" { learning_rate = 1e-3 }
  }
}

# lag-ablation.hcl: how PPO and GIPO cope with stale data.
#
# AcceRL's asynchronous pipeline makes the acting policy lag behind the one
# being trained. This experiment provokes lag on purpose: pipeline.lag = k
# makes the inference service act with the weights published k versions ago,
# so every sample the trainer sees is k updates stale. PPO's hard clip treats
# stale ratios one way, GIPO's Gaussian weight w = exp(-½ (log ρ / σ)²)
# another; the AcceRL paper reports GIPO stable at a lag of 1000 where PPO
# diverges around 200.
#
# 2 algorithms × 4 lags × 3 seeds = 24 runs. To make a lag of 1000 updates
# meaningful within a CPU budget, updates are small (128 steps, 2 epochs of
# 2 minibatches): 250k steps are about 1950 updates per run.
#
#   accerl plan examples/lag-ablation.hcl
#   accerl run examples/lag-ablation.hcl
#   accerl run examples/lag-ablation.hcl -var steps=100000   # a quicker look

variable "steps" {
  default     = 250000
  description = "environment steps per run"
}

experiment "lag-ablation" {
  seeds        = [1, 2, 3]
  max_parallel = 2
  baseline     = "base"

  budget {
    env_steps = var.steps
  }

  env "cartpole" {}

  policy {
    hidden = [64, 64]
  }

  # The base arm is PPO without lag. Advantages are normalised over the whole
  # batch and values recomputed with the current critic: AcceRL's two other
  # lag compensations stay on in every arm, so the arms differ only in the
  # lag and in how the policy loss weighs stale ratios.
  algorithm "ppo" {
    learning_rate    = 2.5e-4
    batch_steps      = 128
    epochs           = 2
    minibatches      = 2
    advantage_norm   = "global"
    recompute_values = true
  }

  pipeline {
    mode            = "sync"     # deterministic: lag is the only staleness
    workers         = 4
    envs_per_worker = 2
    chunk_steps     = 16
    replay_capacity = 1024
  }

  checkpoint {
    every = 200
  }

  ablation "ppo_lag50" {
    pipeline { lag = 50 }
  }
  ablation "ppo_lag200" {
    pipeline { lag = 200 }
  }
  ablation "ppo_lag1000" {
    pipeline { lag = 1000 }
  }
  ablation "gipo_lag0" {
    algorithm "gipo" {}
  }
  ablation "gipo_lag50" {
    algorithm "gipo" {}
    pipeline { lag = 50 }
  }
  ablation "gipo_lag200" {
    algorithm "gipo" {}
    pipeline { lag = 200 }
  }
  ablation "gipo_lag1000" {
    algorithm "gipo" {}
    pipeline { lag = 1000 }
  }
}

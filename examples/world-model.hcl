# world-model.hcl: does the world model save real environment steps?
#
# AcceRL's world model learns CartPole's dynamics (M_obs) and rewards and
# terminations (M_rew). Before training, each run of the base arm records
# offline_trajectories random-policy episodes and pretrains both models on
# them (the CollectOffline and PretrainWorldModel activities, under
# <run>/worldmodel/). During training every batch is imagination_ratio
# imagined: extensions of real states rolled H steps through the world
# model with the current policy, bootstrapped with V at the horizon unless a
# termination is predicted. H starts at horizon.start and rises towards
# horizon.end as the model's validation loss on fresh real data falls; the
# Run workflow keeps that schedule, so it survives crashes.
#
# The ablation switches the world model off: the same PPO on real data only.
# Compare the evaluation curves against env_steps in the report: only real
# (simulator) training steps count toward the budget. The offline steps are extra and
# shown in each run's result (offline_steps); `accerl bench
# sample-efficiency` measures the steps-to-target ratio directly.
#
# With imagination_ratio = 0.99 an update takes 8 real steps (2 from each of
# the 4 environments) and about 500 imagined ones, so the world-model arm
# makes ~1,250 updates in 10k real steps where the arm without it makes 20.
# 2 arms × 2 seeds = 4 runs of 10k real steps, a few minutes on 2 cores.
#
#   accerl run examples/world-model.hcl
#   accerl run examples/world-model.hcl -var steps=30000

variable "steps" {
  default     = 10000
  description = "real environment steps per run"
}

experiment "world-model" {
  seeds        = [1, 2]
  max_parallel = 2
  baseline     = "base"

  budget {
    env_steps = var.steps
  }

  env "cartpole" {}

  policy {
    hidden = [64, 64]
  }

  algorithm "ppo" {
    learning_rate = 2.5e-4
    batch_steps   = 512
    epochs        = 4
    minibatches   = 4
  }

  pipeline {
    mode            = "sync"   # deterministic, and resumable bit for bit
    workers         = 4
    envs_per_worker = 1
    chunk_steps     = 128
    replay_capacity = 2048
  }

  checkpoint {
    every = 50   # updates per segment: a checkpoint and a horizon step
  }

  # 10 evaluation episodes with the current policy at the end of every
  # segment, apart from training (not counted as env steps): the report's
  # evaluation curve and steps-to-target by evaluation come from them.
  evaluation {
    episodes = 10
  }

  world_model {
    enabled              = true
    offline_trajectories = 200        # random episodes for pretraining (the paper uses 1,000)
    pretrain_epochs      = 10
    history              = 2
    obs_hidden           = [64, 64]
    rew_hidden           = [64, 64]
    reward               = "direct"   # CartPole's reward is 1 per step; termination is what matters
    imagination_ratio    = 0.99       # 507 of every 512 steps imagined; 8 real (rounded up to whole rounds)
    obs_every            = 1          # online M_obs update after every policy update
    rew_every            = 1

    # The loss is M_obs's error in normalised units (1 = no better than
    # predicting the average change). CartPole's pretrained model starts near
    # 0.01 and falls to about 0.0005 online, so these thresholds make H climb
    # from 5 to 50 over the run instead of starting at the top.
    horizon {
      start     = 5
      end       = 50
      loss_high = 0.01
      loss_low  = 0.0005
    }
  }

  ablation "no_world_model" {
    world_model {
      enabled = false
    }
    # 512 real steps per update here: a segment (and an evaluation) every
    # 2 updates evaluates every 1,024 real steps (the base arm: every 400).
    checkpoint {
      every = 2
    }
  }
}

# vla-wm.hcl: AcceRL's "learning in imagination" with a VLA policy on a tabletop suite.
#
# The run clones the micro-VLA of vla.hcl from demonstrations (behaviour cloning), records
# 200 episodes of the scripted expert with execution noise (with camera frames), pretrains a
# world model over pixels on them, and then fine-tunes the VLA with RL where half of every
# batch is imagined:
#   - M_obs, a diffusion denoiser (DIAMOND-style EDM), predicts both cameras' next frames
#     from the last 4 and the robot's actions, one policy step (execute_steps actions) at a
#     time;
#   - a small head predicts the next proprioception beside it;
#   - M_rew, a success/end classifier over frames, scores each imagined step with the rise
#     of its success probability.
# Before every update the trainer measures M_obs on the update's fresh real steps (its
# one-step error over copying the last frame: wm_val_loss in the metrics), lengthens the
# imagined horizon as that error falls (world_model.horizon), fits M_obs and the proprio
# head a few steps on those real steps, and then rolls imagined chunks from real frames
# with the current policy. Only real steps count toward the budget.
#
# On 2 cores: cloning ~12 min, the world model's data and pretraining ~6 min, then about a
# minute per update of 2,048 real + 2,048 imagined steps. The report shows BC then RL
# success, the world model's scores, its real-vs-imagined strip and its per-step error.
# Measured through `accerl bench sample-efficiency --env tabletop` (the same models): see
# the README, "On the tabletop suites, over pixels"; on 2 cores the world model has not yet
# lifted success above what RL on real steps does.
#
#   accerl validate examples/vla-wm.hcl
#   accerl run examples/vla-wm.hcl

variable "steps" {
  default     = 4096
  description = "real env steps (executed action chunks) of RL per run"
}

experiment "vla-wm" {
  seeds        = [1]
  max_parallel = 1

  budget {
    env_steps = var.steps
  }

  env "tabletop" {
    suite      = "spatial"
    tasks      = "all"
    pixels     = true
    image_size = 32
  }

  policy {
    action        = "tokens"
    bins          = 256
    action_chunk  = 8
    execute_steps = 2 # M_obs predicts one policy step of 2 actions at a time
    vla {
      dim           = 64
      layers        = 2
      heads         = 2
      patch         = 8
      executed_only = true
      temperature   = 0.03
      detach_value  = true
    }
  }

  pretrain {
    demos_per_task = 50
    epochs         = 6
    batch          = 32
    learning_rate  = 3e-3
    label_sigma    = 3 # soft labels over neighbouring bins
  }

  algorithm "ppo" {
    learning_rate       = 3e-6
    anneal_lr           = false
    batch_steps         = 4096 # 2,048 real + 2,048 imagined at imagination_ratio 0.5
    epochs              = 2
    minibatches         = 8
    clip                = 0.1
    entropy_coef        = 0.0
    positive_advantages = true
    critic_warmup       = 1
  }

  pipeline {
    mode            = "sync" # imagination starts from each sync round's real frames
    workers         = 4
    envs_per_worker = 4
    chunk_steps     = 256
  }

  world_model {
    enabled              = true
    offline_trajectories = 200            # the paper records 1,000
    behaviour            = "expert_noisy" # about 80% succeed; M_rew needs the failures too
    history              = 4              # context frames, as DIAMOND
    imagination_ratio    = 0.5
    rew_learning_rate    = 3e-3
    obs_every            = 1 # fit M_obs on every update's real steps
    horizon {
      start     = 5
      end       = 50
      loss_high = 1   # H = start while M_obs is no better than copying the last frame
      loss_low  = 0.5 # H = end once its error is half of copying's
    }
    pixels {
      obs_steps         = 400
      rew_steps         = 5000
      proprio_steps     = 3000
      obs_fit_steps     = 8  # online M_obs steps per update
      proprio_fit_steps = 48 # online proprio-head steps per update
    }
  }

  checkpoint {
    every = 1
  }

  evaluation {
    episodes = 50 # 5 per task, from the suite's fixed initial states
    greedy   = true
    sampled  = true # also sampling at the policy's temperature, as RL acts
  }
}

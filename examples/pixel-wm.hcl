# pixel-wm.hcl: AcceRL's world model over camera frames on a tabletop suite, pretrained
# and scored inside `accerl run`.
#
# AcceRL learns "in imagination": a world model trained on recorded episodes predicts the
# next camera frames from the last few and the robot's action (M_obs, a diffusion
# denoiser in the style of DIAMOND), and a classifier says from a frame whether the task
# has succeeded (M_rew). This example records 200 episodes of the scripted expert with
# execution noise (about 80% succeed, the failures are kept: M_rew needs both), trains
# M_obs, M_rew and a proprioception head on them with checkpoints (kill the run and start
# it again: pretraining resumes where it stopped and ends in the same weights), and scores
# them on one held-out episode in ten:
#   <run>/worldmodel/pixel-wm.json       M_obs's per-step imagined MSE against copying the
#                                        last real frame, M_rew's accuracy, the curves
#   <run>/worldmodel/pixel-wm-strip.png  real (upper) and imagined (lower) frames per camera
# The report's "Pixel world model" table shows the same scores. Then the MLP policy trains
# on real steps (imagination_ratio = 0: imagined frames are for the micro-VLA, which reads
# them; with a vla block and imagination_ratio > 0 part of every batch is imagined).
#
# On 2 cores collecting takes ~10 s, M_obs ~1 s a step (400 steps), M_rew ~4 min, the
# proprio head ~10 s. A residual M_obs sampled in one step beat copying the last real
# frame at every imagined step after 150 training steps (docs/results/world-model/README.md).
#
#   accerl validate examples/pixel-wm.hcl
#   accerl run examples/pixel-wm.hcl

variable "obs_steps" {
  default     = 400
  description = "M_obs pretraining steps (about one second each on 2 cores)"
}

experiment "pixel-wm" {
  seeds        = [1]
  max_parallel = 1

  budget {
    env_steps = 2048
  }

  env "tabletop" {
    suite      = "spatial"
    tasks      = "all"
    pixels     = true # render both cameras at every step
    image_size = 32   # the world model's working resolution
  }

  policy {
    action = "tokens"
    hidden = [64, 64]
  }

  algorithm "ppo" {
    batch_steps = 1024
  }

  pipeline {
    mode            = "sync"
    workers         = 2
    envs_per_worker = 2
    chunk_steps     = 128
    replay_capacity = 2048
  }

  world_model {
    enabled              = true
    offline_trajectories = 200            # the paper records 1,000
    behaviour            = "expert_noisy" # the scripted expert with execution noise
    history              = 4              # context frames, as DIAMOND
    imagination_ratio    = 0              # > 0 needs the VLA policy (it reads the frames)
    rew_learning_rate    = 3e-3           # M_rew's Adam rate (bench pixel-wm's; 1e-3 undertrains it)
    pixels {
      obs_steps       = var.obs_steps
      rew_steps       = 5000
      proprio_steps   = 3000
      behaviour_noise = 0.3
      residual        = true # M_obs denoises the change from the last frame
      sample_steps    = 1    # Euler steps per imagined frame (DIAMOND: 3)
    }
  }
}

# bc.hcl: AcceRL's recipe on a tabletop suite: behaviour cloning (BC) from the scripted
# expert's demonstrations, then RL fine-tuning of the cloned policy.
#
# The spatial suite has ten tasks, each "pick the black bowl <next to / on / between ...>
# and place it on the plate", with the same objects in ten layouts. RL from scratch solves
# none of them (examples/tabletop.hcl), because the reward is 1 on success and 0 otherwise,
# and random actions practically never succeed. So each run first:
#
#   1. records 50 demonstrations per task with the scripted expert (with DART noise: the
#      robot executes the expert's action plus a little noise, and learns the expert's
#      noise-free correction from the states that noise leads to);
#   2. trains the policy to imitate them (least squares on the expert's actions, predicting
#      a chunk of 8 future actions of which 4 run before the policy is asked again, as ACT,
#      OpenVLA-OFT and AcceRL do);
#   3. measures the cloned policy's success rate (the report's "BC success");
#
# and then fine-tunes that policy with PPO on the sparse success reward. The "scratch" arm
# is the same run without the warm start. The report's "Behaviour cloning, then RL" table
# sets BC success beside the final success of every run.
#
#   accerl validate examples/bc.hcl
#   accerl run examples/bc.hcl
#
# An env step here is one executed chunk (4 simulator steps); the demonstrations' expert
# steps are reported apart (demo_steps) and not counted in env steps.

variable "steps" {
  default     = 49152
  description = "env steps (executed action chunks) of RL per run"
}

experiment "bc-spatial" {
  seeds        = [1]
  max_parallel = 1

  budget {
    env_steps = var.steps
  }

  env "tabletop" {
    suite = "spatial"
    tasks = "all"
  }

  policy {
    action        = "gaussian"
    hidden        = [256, 256]
    activation    = "relu"
    init_log_std  = -2.3 # σ ≈ 0.1 action units for RL's exploration around the cloned mean
    action_chunk  = 8
    execute_steps = 4
  }

  pretrain {
    demos_per_task = 50
    epochs         = 30
  }

  algorithm "ppo" {
    learning_rate = 3e-5
    anneal_lr     = false
    batch_steps   = 4096
    epochs        = 4
    minibatches   = 8
    clip          = 0.1
    entropy_coef  = 0.0
    gamma         = 0.99
  }

  pipeline {
    mode            = "sync"
    workers         = 4
    envs_per_worker = 4
    chunk_steps     = 256
    replay_capacity = 8192
  }

  checkpoint {
    every = 2
  }

  evaluation {
    episodes = 100 # 10 per task, from the suite's fixed initial states
    greedy   = true
  }

  ablation "scratch" {
    pretrain {
      enabled = false
    }
  }
}

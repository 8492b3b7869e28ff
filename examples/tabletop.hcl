# tabletop.hcl: the LIBERO-style tabletop suites end to end through `accerl run`.
#
# The "goal" suite is one fixed scene (a cabinet with three drawers, a stove,
# a wine rack, a bowl, a plate, cream cheese and a wine bottle) with ten goals
# ("open the middle drawer of the cabinet", "turn on the stove", "put the bowl
# on the plate", ...). Rollout workers sample each episode's task with weight
# (failures in its last 100 episodes) + 1, as AcceRL's do. The policy here is
# the MLP with the VLA-style tokens head (each of the 7 action dimensions one
# of 256 tokens) on the 46-D state vector (proprioception, object positions,
# joints, the task); pixel policies come with the micro-VLA.
#
# What to expect: the reward is sparse (1 on success), and a policy that
# starts from scratch practically never succeeds by chance (random actions
# solve none of 200 episodes over the 10 tasks), so RL alone learns nothing
# here: the evaluation success rate stays at 0. That is why AcceRL starts RL
# from a policy cloned from demonstrations: examples/bc.hcl does, with a
# pretrain block (`accerl demos` records such demonstrations as Arrow files for
# other tools). This example exercises the
# suite through the whole system: segments, checkpoints (kill it and run it
# again), evaluation episodes with their success rate, and the report.
#
#   accerl validate examples/tabletop.hcl
#   accerl run examples/tabletop.hcl
#   accerl render --suite goal --task 1 --expert     # look at the scene

variable "steps" {
  default     = 16384
  description = "environment steps per run"
}

experiment "tabletop" {
  seeds        = [1]
  max_parallel = 1

  budget {
    env_steps = var.steps
  }

  env "tabletop" {
    suite = "goal"
    tasks = "all"
    # The goal suite's episodes end after 300 steps at the latest.
  }

  policy {
    action = "tokens"   # 7 action tokens of 256 bins each, decoded autoregressively
    hidden = [128, 128]
  }

  algorithm "ppo" {
    learning_rate = 3e-4
    batch_steps   = 2048
    epochs        = 4
    minibatches   = 4
    entropy_coef  = 0.0
  }

  pipeline {
    mode            = "sync"
    workers         = 4
    envs_per_worker = 2
    chunk_steps     = 256
    replay_capacity = 4096
  }

  checkpoint {
    every = 2           # updates per segment: 4 segments of 4096 steps
  }

  evaluation {
    episodes = 10       # after every segment; the report shows their success rate
  }
}

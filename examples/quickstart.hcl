# quickstart.hcl: the smallest experiment worth running.
#
# It trains PPO on CartPole twice, once with the asynchronous pipeline (the
# "base" arm) and once in lock-step sync mode (the "sync" ablation), with two
# seeds each: 4 runs in all. The numbers below aim for all 4 runs to finish
# in about two and a half minutes on 2 cores, with every run reaching a mean
# return of 150 or more (CartPole's maximum is 500).
#
#   accerl validate examples/quickstart.hcl
#   accerl run examples/quickstart.hcl
#   accerl run examples/quickstart.hcl -var steps=100000   # train longer

# The budget is a variable so it can be changed from the command line
# without editing this file.
variable "steps" {
  default     = 60000
  description = "environment steps per run"
}

experiment "quickstart" {
  # One run per arm per seed. Two seeds are the least that shows whether a
  # difference between arms is more than luck.
  seeds = [1, 2]

  # Run all 4 runs at once; each is small enough to share 2 cores.
  max_parallel = 4

  # Reports compare every arm against the sync arm, so the throughput figure
  # shows the async speedup over the lock-step baseline.
  baseline = "sync"

  budget {
    # 60k steps: enough for PPO to pass a mean return of 150 on CartPole,
    # few enough to keep the example quick. Solving CartPole fully (500)
    # takes more, e.g. -var steps=200000.
    env_steps = var.steps
    # No wall-clock limit: the step budget alone ends each run.
    wall_time = "0s"
  }

  env "cartpole" {
    # Gymnasium's CartPole-v1 limit; episodes end at 500 steps at the latest.
    max_episode_steps = 500

    # CartPole steps in microseconds, so no simulated latency: this example
    # is about learning, throughput.hcl is about slow simulators.
    latency {
      kind = "none"
    }
  }

  policy {
    # CartPole has two discrete actions: push left or push right.
    action     = "categorical"
    # Two hidden layers of 64 units with tanh, CleanRL's PPO network.
    hidden     = [64, 64]
    activation = "tanh"
  }

  algorithm "ppo" {
    # CleanRL's CartPole PPO hyperparameters, annealed linearly to 0.
    learning_rate = 2.5e-4
    anneal_lr     = true
    gamma         = 0.99
    gae_lambda    = 0.95
    clip          = 0.2
    entropy_coef  = 0.01
    value_coef    = 0.5
    max_grad_norm = 0.5
    # 512 steps per update (CleanRL: 4 envs x 128 steps), 4 epochs of 4
    # minibatches of 128 steps each.
    batch_steps = 512
    epochs      = 4
    minibatches = 4
  }

  pipeline {
    mode = "async"
    # 4 workers x 2 envs = 8 environments feeding the trainer, so one
    # update's 512 steps are 64 steps per environment.
    workers         = 4
    envs_per_worker = 2
    # Each worker pushes trajectory chunks of 64 steps to replay.
    chunk_steps = 64
    # Replay holds 4 updates' worth of steps; async mode can run ahead of
    # the trainer by at most this much.
    replay_capacity = 2048
  }

  checkpoint {
    # 60000 / 512 is about 117 updates; a checkpoint every 20 updates gives
    # 6 training segments per run, so a crash loses at most 20 updates.
    every = 20
    keep  = 3
  }

  # The sync arm changes only the pipeline mode; everything else is
  # inherited from the base above.
  ablation "sync" {
    pipeline { mode = "sync" }
  }
}

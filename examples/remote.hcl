# remote.hcl: CartPole stepped on an environment server instead of in process.
#
# The rollout workers step their environments over dm_env_rpc (gRPC), one round trip per
# step, on the server started first; inference and training stay in this process. With
# `addresses = [...]` instead of `address`, the environments spread over several servers
# (environment i on addresses[i mod n]), e.g. simulator hosts next to a GPU trainer.
#
#   accerl envserver &                      # serves on 127.0.0.1:7000
#   accerl run examples/remote.hcl
#   accerl run examples/remote.hcl -var server=10.0.0.5:7000

variable "server" {
  default     = "127.0.0.1:7000"
  description = "host:port of the environment server (accerl envserver)"
}

experiment "remote" {
  seeds = [1]

  budget {
    env_steps = 30000
  }

  env "remote" {
    address = var.server
    # The simulator the server runs, and what this arm is built for: the policy, the
    # checks and the server's specs (verified when training starts) follow CartPole's.
    world = "cartpole"
    max_episode_steps = 500
  }

  pipeline {
    # 8 environments stepping concurrently hide most of each one's round trip.
    workers         = 4
    envs_per_worker = 2
  }

  policy {
    action = "categorical"
    hidden = [64, 64]
  }

  algorithm "ppo" {
    batch_steps = 1024
  }

  checkpoint {
    # A checkpoint carries every remote episode's state (the server's "state" property),
    # so an interrupted run resumes exactly where it stopped.
    every = 10
  }
}

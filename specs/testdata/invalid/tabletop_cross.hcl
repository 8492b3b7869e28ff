# Tabletop constraints checked per resolved arm.
experiment "tabletop_cross" {
  budget { env_steps = 1000 }
  env "tabletop" { suite = "spatial" }
  policy { action = "tokens" }

  ablation "task_out_of_range" {
    env "tabletop" {
      suite = "goal"
      task  = 12                     # ERROR: Unknown task
    }
  }
  ablation "mlp_head" {
    policy { action = "categorical" } # ERROR: Action head does not suit the environment
  }
}

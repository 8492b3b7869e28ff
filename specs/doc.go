// Package specs is accerl's experiment language: it reads an HCL spec,
// checks it, and resolves it into plain Go structs that the engine runs.
//
// A spec describes one experiment: a base configuration (the "base" arm),
// ablation arms that each change a few settings of the base, the seeds to run
// every arm with, and a budget. The result of parsing is an [Experiment]
// whose arms are fully resolved (every field set, no HCL left), which
// serialises to JSON (it travels as a Temporal payload) and carries a
// canonical hash. [Experiment.Runs] expands it into one [Run] per arm and
// seed.
//
// Problems are returned as [hcl.Diagnostics], each with a terse Summary, a
// Detail that says how to fix it, and a Subject pointing at the offending
// text. This package never prints them; a caller renders them with HCL's
// text writer, passing the source files the [Parser] read:
//
//	p := specs.NewParser()
//	exp, diags := p.ParseFile("examples/quickstart.hcl", map[string]string{"steps": "5000"})
//	if diags.HasErrors() {
//		wr := hcl.NewDiagnosticTextWriter(os.Stderr, p.Files(), 78, true)
//		wr.WriteDiagnostics(diags)
//		return
//	}
//	for _, run := range exp.Runs() { ... }
//
// # The language
//
// Every attribute and block below is shown with its default value, except
// budget.env_steps, the env kind and the experiment name, which have none.
// Comments give the allowed values.
//
//	variable "steps" {
//	  default     = 100000
//	  description = "env steps per run"   # optional
//	}
//
//	experiment "quickstart" {
//	  seeds        = [1, 2]       # one run per arm per seed; unique, >= 0 (default [1, 2])
//	  max_parallel = 4            # runs executing at once, >= 1
//	  baseline     = "base"       # arm that reports compare against
//
//	  budget {                    # required
//	    env_steps = var.steps     # required, > 0: env steps per run, all workers together
//	    wall_time = "0s"          # Go duration, >= 0; 0 = unlimited
//	  }
//
//	  env "cartpole" {            # required; kind: cartpole | acrobot | pendulum | mountaincar_continuous | tabletop
//	    max_episode_steps = 500   # >= 1; default by kind: cartpole 500, acrobot 500,
//	                              # pendulum 200, mountaincar_continuous 999; tabletop by suite:
//	                              # spatial 220, object 280, goal 300, long 520
//	    # tabletop only (LIBERO-style manipulation: 7-D delta end-effector + gripper action in
//	    # [-1, 1], a 46-D state vector, two RGB cameras, a language instruction, reward 1 on success):
//	    #   suite      = "spatial"  # spatial | object | goal | long
//	    #   tasks      = "all"      # "all" (default) or a list of task indices 0-9; or task = 3
//	    #   image_size = 64         # camera resolution: 16, 32, 64, 128 or 256
//	    #   cameras    = ["agentview", "wrist"] # the default: both
//	    #   pixels     = false      # true: render every step; frames go through inference, replay, checkpoints
//	    latency {                 # simulated simulator step latency
//	      kind          = "none"  # none | constant | lognormal
//	      median        = "5ms"   # constant delay, or lognormal median; >= 0 (> 0 for lognormal)
//	      sigma         = 1.0     # lognormal shape, >= 0
//	      slow_fraction = 0.25    # fraction of rollout workers that are slow, [0, 1]
//	      slow_factor   = 3.0     # slow workers' latency multiplier, >= 1
//	    }
//	  }
//	  # or stepped on dm_env_rpc servers (`accerl envserver`), in place of the env block above:
//	  # env "remote" {
//	  #   address  = "127.0.0.1:7000"    # host:port; or addresses = [...], env i on addresses[i mod n]
//	  #   world    = "tabletop"          # a kind above; the arm follows that kind's rules
//	  #   settings = { suite = "spatial" } # tabletop: its attributes above; other worlds: none
//	  #   max_episode_steps = 220        # as above; no latency block (the servers' is real)
//	  # }
//
//	  policy {
//	    action     = "categorical" # categorical | tokens | gaussian
//	    hidden     = [64, 64]      # hidden layer widths; at least one, each >= 1
//	    activation = "tanh"        # tanh | relu
//	    bins       = 256           # tokens head: bins per action dimension, >= 2
//	    init_log_std = 0.0         # gaussian head: initial log std, [-20, 5]
//	    # action_chunk  = 8        # gaussian head: actions per query (K), [1, 64]; off when unset
//	    # execute_steps = 4        # of each chunk, run open loop before the next query; [1, K]
//	  }
//
//	  algorithm "ppo" {            # name: ppo | gipo | sapo | vtrace
//	    learning_rate    = 2.5e-4  # > 0
//	    anneal_lr        = true    # linear decay to 0 over the budget
//	    gamma            = 0.99    # (0, 1]
//	    gae_lambda       = 0.95    # [0, 1]
//	    clip             = 0.2     # > 0
//	    value_coef       = 0.5     # >= 0
//	    entropy_coef     = 0.01    # >= 0
//	    max_grad_norm    = 0.5     # > 0
//	    epochs           = 4       # >= 1
//	    minibatches      = 4       # >= 1; need not divide batch_steps
//	    batch_steps      = 512     # env steps consumed per update, >= 1
//	    norm_adv         = true    # false disables normalisation whatever advantage_norm says
//	    recompute_values = false   # recompute V(o_t) with current parameters before GAE
//	    advantage_norm   = "minibatch" # global (whole batch, all ranks) | minibatch (per minibatch; "batch" is the deprecated old spelling) | none
//	    gipo_sigma       = 0.5     # GIPO's Gaussian width σ, > 0
//	    kl_coef          = 0.0     # extra KL(π_old‖π) penalty, >= 0
//	    lr_schedule      = "linear" # linear | cosine | constant (with anneal_lr = true)
//	    warmup_updates   = 0       # linear LR warmup, >= 0
//	    sapo_tau_pos     = 1.0     # SAPO gate temperature for A > 0, > 0
//	    sapo_tau_neg     = 1.05    # SAPO gate temperature for A < 0, > 0
//	    vtrace_rho_bar   = 1.0     # V-trace ρ̄ truncation, > 0
//	    vtrace_c_bar     = 1.0     # V-trace c̄ truncation, > 0
//	    clip_value_loss  = true    # clip the value change per update to ±clip (CleanRL)
//	    critic_warmup    = 0       # first N updates train the value alone (no policy step), >= 0
//	    skip_rewardless  = false   # true: a batch whose rewards are all 0 trains the value alone
//	    positive_advantages = false # true: only steps with advantage > 0 move the policy (self-imitation)
//	    adv_estimator    = "gae"   # gae | grpo (each ended episode's return against its task's others in the batch, no critic)
//	    repeat_starts    = 0       # with grpo, N >= 2: each start played N times in a row, episodes judged against their start's plays
//	  }
//
//	  pipeline {
//	    mode            = "async"  # async | sync
//	    workers         = 4        # rollout workers, >= 1
//	    envs_per_worker = 2        # >= 1
//	    chunk_steps     = 64       # steps per trajectory chunk pushed to replay, >= 1, <= replay_capacity
//	    replay_capacity = 8192     # steps, >= batch_steps
//	    max_staleness   = 0        # 0 keeps all; else drop samples older than this many versions
//	    lag             = 0        # artificial policy lag in versions, >= 0
//	    inference {
//	      max_batch = 256          # >= 1
//	      max_wait  = "5ms"        # > 0
//	    }
//	  }
//
//	  checkpoint {
//	    every = 25                 # trainer updates per training segment (checkpoint at its end), >= 1
//	    keep  = 3                  # newest checkpoints kept, >= 1
//	    heartbeat_timeout = "30s"  # a segment silent this long is retried elsewhere, > 0
//	  }
//
//	  evaluation {                 # separate evaluation episodes at the end of every segment
//	    episodes = 0               # per segment, >= 0; 0 turns evaluation off
//	    greedy   = false           # true: most likely action; false: sample as in training
//	    sampled  = false           # with greedy: also play the episodes sampling, as in training
//	  }
//
//	  # pretrain {                 # behaviour-cloning warm start (tabletop, gaussian head)
//	  #   demos_per_task = 50      # expert episodes recorded per task
//	  #   epochs         = 30      # passes over the demonstrations
//	  #   batch          = 128     # samples per gradient step
//	  #   learning_rate  = 1e-3    # Adam, decayed linearly to a tenth
//	  #   noise          = 0.1     # DART execution noise while recording, [0, 1]
//	  #   enabled        = true    # false (in an ablation): RL from scratch
//	  # }
//
//	  metrics {                    # what a run writes besides its Arrow metrics
//	    tensorboard = true         # false: no TensorBoard event files under <run>/tb/
//	  }
//
//	  resources {                  # what the run's training segments need
//	    gpu = 0                    # 0 or 1; 1 schedules them on the "gpu" task queue
//	  }                            # (accerl worker --queue gpu; accerl run serves it too)
//
//	  debug {                      # test-only hooks; never needed in a real experiment
//	    nan_at_update = 0          # > 0: inject a NaN at this update (tests failure handling)
//	  }
//
//	  world_model {                # AcceRL's world model; see "World model" below
//	    enabled              = false      # true: pretrain, imagine and mix imagined data into training
//	    offline_trajectories = 1000       # episodes recorded before training, >= 0; 0 skips pretraining
//	    behaviour            = "random"   # policy that records them: random | expert_noisy (pixels only)
//	    history              = 2          # observations the observation model sees, >= 1
//	    obs_hidden           = [128, 128] # observation model hidden widths, each >= 1
//	    rew_hidden           = [64, 64]   # reward model hidden widths, each >= 1
//	    obs_learning_rate    = 1e-3       # > 0
//	    rew_learning_rate    = 1e-3       # > 0
//	    reward               = "direct"   # direct | success_delta
//	    pretrain_epochs      = 20         # passes over the offline data, >= 1
//	    imagination_ratio    = 0.5        # share of each batch's steps that is imagined, [0, 1)
//	    obs_every            = 100        # policy updates between observation-model updates, >= 1
//	    rew_every            = 50         # policy updates between reward-model updates, >= 1
//	    horizon {                         # imagination horizon H
//	      start     = 5                   # H of a poor model, >= 1, <= end
//	      end       = 50                  # H of a good model, >= 1
//	      loss_high = 0.5                 # validation loss at and above which H = start, > 0
//	      loss_low  = 0.05                # validation loss at and below which H = end, >= 0, < loss_high
//	    }
//	    # pixels {                        # the pixel world model (env "tabletop" { pixels = true })
//	    #   obs_steps       = 400         # M_obs (EDM denoiser over the frames) pretraining steps, >= 1
//	    #   rew_steps       = 5000        # M_rew (success/end classifier) pretraining steps, >= 1
//	    #   proprio_steps   = 3000        # proprio head pretraining steps, >= 1
//	    #   behaviour_noise = 0.3         # execution noise of behaviour = "expert_noisy", [0, 1]
//	    #   residual        = true        # M_obs denoises the change from the last frame
//	    #   sample_steps    = 1           # Euler steps per imagined frame (DIAMOND: 3), >= 1
//	    #   obs_fit_steps     = 0         # online M_obs steps every obs_every updates (imagination_ratio > 0), >= 0
//	    #   proprio_fit_steps = 0         # online proprio-head steps with them, >= 0
//	    #   rew_fit_steps     = 0         # online M_rew steps every rew_every updates, >= 0
//	    #   group             = 0         # imagined rollouts per start; >= 2 with adv_estimator = "grpo"
//	    #   temperature       = 0.3       # imagined rollouts' action sampling temperature, [0, 10]; 0: policy.vla's
//	    #   graded            = false     # rank a group by M_rew's p_success change, mean-centred (needs group >= 2)
//	    #   rew_imagined      = 0         # M_obs-imagined endings per offline episode M_rew also trains on, [0, 64]
//	    #   rew_counterfactual = 0        # imagined endings with another episode's actions, labelled by the simulator, [0, 64]
//	    #   self_forcing      = 0         # M_obs context frames replaced by its own predictions in training, <= history
//	    #   self_forcing_from = 0         # M_obs step self-forcing starts at, < obs_steps (measured: 1600 of 2000)
//	    # }
//	  }
//
//	  ablation "sync" {            # an arm; overrides only what it writes
//	    pipeline { mode = "sync" }
//	  }
//	  ablation "big_net" {
//	    policy { hidden = [128, 128] }
//	    algorithm "ppo" { learning_rate = 3e-4 }
//	  }
//	}
//
// The language accepts every action head and algorithm listed, so specs can
// be written ahead of the engine; which of them a given engine version can
// run is the engine's check, not this package's.
//
// Durations are Go duration strings ("5ms", "30s", "1h30m"); the number 0 is
// accepted for a zero duration. Whole-number attributes reject fractions.
// HCL allows a block on one line only when it holds a single argument, so a
// nested block needs lines of its own:
//
//	ablation "short_wait" {
//	  pipeline {
//	    inference { max_wait = "1ms" }
//	  }
//	}
//
// The blocks of an experiment may come in any order; each of budget, env,
// policy, algorithm, pipeline, checkpoint, evaluation, debug and world_model may appear
// at most once per experiment or ablation, as may latency, inference and
// horizon within their parent.
//
// # Arms and ablations
//
// The experiment block itself describes the arm named "base". Each ablation
// block describes one more arm, named by its label: it starts from the fully
// decoded base and overrides exactly the attributes it writes, at any
// nesting depth. Writing
//
//	ablation "short_wait" {
//	  pipeline {
//	    inference { max_wait = "1ms" }
//	  }
//	}
//
// changes only pipeline.inference.max_wait; max_batch, workers and everything
// else keep the base's values (not the defaults). Because env and algorithm
// blocks carry a label, an ablation writes it too, and may change it:
// algorithm "gipo" {} in an ablation switches the algorithm and keeps the
// base's hyperparameters. An ablation that switches the env kind and writes
// no max_episode_steps gets the new kind's default, unless the base wrote
// max_episode_steps explicitly, in which case that value is inherited.
// Ablations may not set seeds, max_parallel or baseline, which belong to the
// whole experiment.
//
// Arms are ordered "base" first, then ablations in file order. Arm and
// experiment names appear in run IDs, workflow IDs and directory names, so
// they must start with a letter or digit and contain only letters, digits,
// '_', '-' and '.'. A second arm with the same name, or an ablation named
// "base", is an error at its label.
//
// # Variables
//
// A variable block declares a value that expressions read as var.NAME, in any
// attribute of the experiment. Its default must be a literal. A -var override
// (the map passed to [Parse]) replaces the default; its raw text is read as
// an HCL expression, so 5000 is a number, "sync" (with quotes) a string,
// [1, 2] a list and true a bool. Text that is not a valid literal and does
// not open like one (with " [ { or () is taken as the string it spells, so
// -var mode=sync and -var wall=30m work as expected. It is an error to
// override an undeclared variable, to leave a variable with neither default
// nor override, or to refer to an undeclared variable. Diagnostics about a
// -var point into a pseudo file named "<-var NAME>" holding "NAME=VALUE",
// which [Parser.Files] includes so it renders with a snippet.
//
// # Checking
//
// [Parser.Parse] works in phases and stops after the first one with an error,
// since later phases would mostly repeat it; within a phase every problem is
// reported, sorted by position:
//
//  1. syntax;
//  2. top-level structure (exactly one experiment block) and variables;
//  3. every attribute of the base and of each ablation: types, ranges,
//     allowed values, durations, seeds, block counts, names, baseline;
//  4. checks between fields of each resolved arm: replay_capacity >=
//     batch_steps, chunk_steps <= replay_capacity, a lognormal latency with
//     a positive median, world_model.horizon start <= end and loss_low <
//     loss_high (checked even while the world model is disabled), and no
//     success_delta reward on pendulum, which has no success signal. A
//     conflict an ablation inherits from the base is reported once, at the
//     base.
//
// # World model
//
// With world_model.enabled = true a run first records offline_trajectories
// episodes of the behaviour policy and pretrains the observation model
// M_obs(o_{t−k+1..t}, a_t) → ô_{t+1} (k = history; it predicts the change
// of the observation) and the reward model M_rew(o) for pretrain_epochs.
// Training then mixes imagined rollouts into every batch at
// imagination_ratio: each starts from a real state and runs H steps through
// M_obs with the current policy, bootstrapping with V at the horizon unless
// M_rew predicts a termination. With reward = "direct" M_rew predicts the
// reward; with "success_delta" it predicts the probability p that the
// episode succeeds, and an imagined step earns p(ô_{t+1}) − p(ô_t)
// (cartpole: reaching the time limit; acrobot and mountaincar_continuous:
// reaching the goal). The models keep learning from real data every
// obs_every and rew_every policy updates.
//
// H follows the horizon block: start while the observation model's loss
// on real validation data is at or above loss_high, end once it is at or
// below loss_low, linear in between, and it never decreases. The loss is
// in normalised units — 1 is as good as predicting the average change of
// the observation, 0 is perfect — so the default thresholds (0.5 and
// 0.05) mean the same in every environment: H starts rising once the model
// halves the error of that baseline and reaches 50 at a twentieth of it.
//
// A pixels block inside world_model makes it the pixel world model of the
// tabletop suites (env "tabletop" { pixels = true }): the offline episodes
// keep both cameras' frames (behaviour "expert_noisy" plays the scripted
// expert with behaviour_noise, keeping failures), M_obs is an EDM denoiser
// that imagines the next frames from the last history frames and the
// action, a proprio head predicts the 8-D proprioception, and M_rew
// classifies frames as success and episode end. They pretrain for
// obs_steps, rew_steps and proprio_steps and are scored on one held-out
// episode in ten: the imagined frames' mean squared error per step against
// copying the last real frame, M_rew's accuracy, precision and recall, and a
// real-vs-imagined PNG strip. The horizon schedule's loss is then M_obs's
// first imagined step's error over copying the last frame's (1 is no better
// than copying). With imagination_ratio > 0 (the VLA policy in sync mode)
// the fixed models imagine that share of every batch, starting from the
// sync round's real frames: the VLA acts on imagined images and
// proprioception, M_rew's p_success increments are the rewards and its p_end
// ends a rollout.
//
// # Hash
//
// [Experiment.Hash] is the hex SHA-256 of the canonical JSON of the resolved
// experiment (name, seeds, max_parallel, baseline and all arms). Since only
// resolved values enter it, comments, layout, attribute order and whether a
// value came from a variable or a literal do not change it; any resolved
// value does, including the order of seeds and arms (which orders runs).
// Workflow IDs derive from it, so re-running an unchanged spec attaches to
// the same experiment.
//
// # JSON
//
// All types marshal with snake_case keys matching the HCL names; durations
// are strings with units ("30m0s", "5ms"; jsondur.Duration). Decoding also
// accepts the integer nanoseconds that versions before 2026-12 wrote, and
// the hash still covers durations as integer nanoseconds, so hashes did not
// change with the encoding.
package specs

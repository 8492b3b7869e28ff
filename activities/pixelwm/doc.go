// Package pixelwm is the data and measurement side of the pixel world
// model of issue #15: offline trajectories with camera frames recorded on
// the tabletop suites, the samples the observation model M_obs
// (kernels/edm), the reward model M_rew (kernels/edm/reward) and the
// proprio head (kernels/edm/proprio: the 8-D proprioception predicted
// alongside the frames) train on, and their evaluation on held-out
// episodes. The kernels know nothing of
// the simulator; this package is where the two meet.
//
// # Offline data
//
// [Collect] plays N episodes of a behaviour policy — BehaviourRandom or
// BehaviourExpertNoisy, the scripted expert executed with DART noise —
// and keeps every episode, failed or not (activities/bc's Collect keeps
// only successes, which a reward model cannot learn from). An [Episode]
// holds the frames of every camera from the reset to the observation
// after the last action, the executed actions between them and two labels
// per frame from the simulator: Success (the goal holds now or held
// earlier in the episode; tabletop ends an episode when it first holds)
// and End (the episode has ended by now). With Linger > 0 the simulator
// keeps running for that many steps after the end, so that the reward
// model also sees frames after success, as imagined rollouts will.
//
// [Save] stores episodes as Arrow IPC with image columns through
// activities/demos' writer (its schema, one file per task, one row per
// frame, the last frame of an episode with a zero action) plus a manifest
// with every file's SHA-256; [Load] reads them back, checksums verified;
// [CollectOrLoad] reuses a stored dataset of the same input.
//
// # Measurement
//
// [Bench] collects the data, holds out one episode in HeldEvery, trains
// M_obs and then M_rew for their shares of a wall-time budget and reports
// M_obs's open-loop per-step MSE against the copy-last-frame baseline
// ([EvaluateImagination]), M_rew's accuracy, precision and recall of
// success and of end, and the error of the imagined reward r̂_t =
// p_success(o_{t+1}) − p_success(o_t) against the true success increments
// ([EvaluateReward]). It then trains the proprio head for ProprioSteps
// steps on [ProprioSamples] (each episode's recorded proprioception, the
// same windows as M_obs's transitions) and reports its open-loop per-step
// error from the same starts as M_obs's rollouts and its one-step error on
// every held-out transition, both against copying the last vector
// ([EvaluateProprio]). `accerl bench pixel-wm` runs it.
package pixelwm

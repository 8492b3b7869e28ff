// Package activities holds accerl's Temporal activities: the work that touches disks, clocks
// and CPUs, as methods on structs that carry their dependencies.
//
//   - Trainer.TrainSegment runs the AcceRL engine (package engine) for a bounded number of
//     trainer updates, heartbeating its progress, then writes a checkpoint, the segment's
//     metrics rows and the run summary, and returns a TrainSegmentResult.
//     With the world model on it starts from the pretrained state (TrainSegmentInput.
//     WorldModelState) at the horizon the workflow passes, and reports the world model's
//     validation loss on recent real data for the horizon schedule.
//     With a pretrain block its run's first segment starts from the behaviour-cloned policy
//     (TrainSegmentInput.PolicyState).
//   - Trainer.PretrainPolicy is the behaviour-cloning warm start (the spec's pretrain block):
//     it records expert demonstrations of the tabletop suite, clones them into the arm's
//     policy epoch by epoch (checkpoints under <run>/bc, resumed on retry), measures the
//     clone's success with the evaluation protocol and writes <run>/pretrain.json.
//   - Trainer.FinishRun records a run's final status.
//   - WorldModel.CollectOffline records the offline dataset (Arrow IPC) under
//     <run>/worldmodel/dataset; WorldModel.PretrainWorldModel pretrains M_obs and M_rew on it
//     with a held-out split, checkpointing each epoch under <run>/worldmodel/pretrain and
//     resuming from the newest checkpoint on retry. Both are idempotent.
//   - Reporter.PrepareExperiment writes the experiment manifest; Reporter.Report builds the
//     report from stored metrics.
//
// Each activity has exactly one Input and one Result struct so fields can be added without
// breaking running workflow histories. The engine underneath (activities/engine) and the
// checkpoint store (activities/checkpoint) know nothing of Temporal.
//
// A retried TrainSegment always restarts from the checkpoint of the previous segment, never
// from its own partial work, and replaces the metrics file of its segment: a crash costs at most
// one segment of compute and never duplicates or changes results.
package activities

package activities

import (
	"math"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/activities/telemetry"
	"github.com/accerl/accerl/runstore"
)

// recorder turns the engine's per-update reports into metrics and episode rows for one
// segment, sampling CPU (and GPU, when present) utilisation once per row.
type recorder struct {
	segment    int32
	startWallS float64
	sampler    *telemetry.Sampler
	metrics    []runstore.MetricsRow
	episodes   []runstore.EpisodeRow
}

func newRecorder(segment int32, startWallS float64) *recorder {
	return &recorder{segment: segment, startWallS: startWallS, sampler: telemetry.NewSampler()}
}

// close releases the utilisation sampler.
func (r *recorder) close() { r.sampler.Close() }

func (r *recorder) add(u engine.UpdateReport) {
	ret := math.NaN()
	if len(u.Episodes) > 0 {
		var s float64
		for _, e := range u.Episodes {
			s += e.Return
		}
		ret = s / float64(len(u.Episodes))
	}
	// Success is 1 or 0 for tasks with a notion of success and NaN ("not applicable")
	// otherwise; the metrics row has the update's success rate.
	success, judged := 0.0, 0
	for _, e := range u.Episodes {
		row := runstore.EpisodeRow{
			Segment: r.segment, EnvSteps: e.EnvSteps, Return: e.Return, Length: int64(e.Length),
			PolicyVersion: e.PolicyVersion, Success: math.NaN(),
		}
		if e.HasSuccess {
			row.Success = 0
			if e.Success {
				row.Success = 1
			}
			success += row.Success
			judged++
		}
		r.episodes = append(r.episodes, row)
	}
	successRate := math.NaN()
	if judged > 0 {
		successRate = success / float64(judged)
	}
	horizon := math.NaN() // no world model
	if u.Horizon > 0 {
		horizon = float64(u.Horizon)
	}
	util := r.sampler.Sample()
	r.metrics = append(r.metrics, runstore.MetricsRow{
		Segment:        r.segment,
		Step:           u.Update,
		EnvSteps:       u.EnvSteps,
		Updates:        u.Update,
		WallS:          r.startWallS + u.Wall.Seconds(),
		EpisodeReturn:  ret,
		Episodes:       int64(len(u.Episodes)),
		Success:        successRate,
		PolicyVersion:  u.PolicyVersion,
		Staleness:      u.MeanStaleness,
		StepsPerS:      u.StepsPerS,
		InferenceBatch: u.MeanBatch,
		QueueWaitMs:    u.P99WaitMs,
		TrainerBusy:    u.TrainerBusy,
		CPUUtil:        util.CPUUtil,
		GPUUtil:        util.GPUUtil,
		GPUMem:         util.GPUMem,
		Horizon:        horizon,
		WMValLoss:      u.WMValLoss, // NaN without a world model or before it is ready
		PolicyLoss:     u.Stats.PolicyLoss,
		ValueLoss:      u.Stats.ValueLoss,
		Entropy:        u.Stats.Entropy,
		ApproxKL:       u.Stats.ApproxKL,
		ClipFrac:       u.Stats.ClipFrac,
		GradNorm:       u.Stats.GradNorm,
		LowWeightFrac:  u.Stats.LowWeightFrac,
		ESS:            u.Stats.ESS,
		LagClipFrac:    u.Stats.Lag.ClipFrac,
		LagLowWeight:   u.Stats.Lag.LowWeightFrac,
		LagESS:         u.Stats.Lag.ESS,
		EvalReturn:     math.NaN(), // set on the segment's last row by addEval
		EvalSuccess:    math.NaN(),
		ValueOnly:      boolInt(u.Stats.ValueOnly),
		GRPOEpisodes:   int64(u.Stats.GRPOEpisodes),
		GRPOMoved:      int64(u.Stats.GRPOMoved),

		GRPOImagined:        int64(u.Stats.GRPOImagined),
		GRPOImaginedMoved:   int64(u.Stats.GRPOImaginedMoved),
		GRPOImaginedSuccess: int64(u.Stats.GRPOImaginedSuccess),

		EvalSampledReturn:  math.NaN(),
		EvalSampledSuccess: math.NaN(),
	})
}

// addEval records the evaluation played after the segment's last update on
// that update's row, and sampled (evaluation.sampled; nil without) beside it.
// A segment that ran no update has no row to carry them.
func (r *recorder) addEval(ev engine.EvalResult, sampled *engine.EvalResult) {
	if len(r.metrics) == 0 || len(ev.Returns) == 0 {
		return
	}
	last := &r.metrics[len(r.metrics)-1]
	last.EvalReturn, last.EvalEpisodes = ev.Mean(), int64(len(ev.Returns))
	if ev.HasSuccess {
		last.EvalSuccess = ev.SuccessRate()
	}
	if sampled != nil && len(sampled.Returns) > 0 {
		last.EvalSampledReturn = sampled.Mean()
		if sampled.HasSuccess {
			last.EvalSampledSuccess = sampled.SuccessRate()
		}
	}
}

// boolInt is 1 for true and 0 for false (a metrics flag column).
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

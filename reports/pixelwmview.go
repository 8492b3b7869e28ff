package reports

import (
	"fmt"
	"path"
	"strings"

	"github.com/accerl/accerl/runstore"
)

// pixelWMScores is what the report reads of a run's runstore.PixelWorldModelFile: the
// pretrained pixel world model's steps and its scores on the held-out episodes.
type pixelWMScores struct {
	Phase  string `json:"phase"`
	Step   int    `json:"step"`
	Config struct {
		ObsSteps     int `json:"ObsSteps"`
		RewSteps     int `json:"RewSteps"`
		ProprioSteps int `json:"ProprioSteps"`
	} `json:"config"`
	// RewCounterfactual counts M_rew's counterfactual training endings (absent: none).
	RewCounterfactual *struct {
		Endings   int `json:"endings"`
		Succeeded int `json:"succeeded"`
		Frames    int `json:"frames"`
	} `json:"rew_counterfactual"`
	Scores *struct {
		TrainEpisodes int `json:"train_episodes"`
		HeldEpisodes  int `json:"held_out_episodes"`
		// RewImagined counts M_rew's training frames imagined from the episodes' own endings.
		RewImagined int `json:"rew_train_imagined_frames"`
		Imagination struct {
			Rollouts     int       `json:"rollouts"`
			MSE          []float64 `json:"per_step_mse"`
			CopyLastMSE  []float64 `json:"copy_last_per_step_mse"`
			ActionEffect []float64 `json:"action_effect_per_step_mse"`
		} `json:"imagination"`
		Reward struct {
			Success struct {
				Accuracy, Majority, Precision, Recall float64
			} `json:"success"`
		} `json:"reward"`
		Endings *struct {
			Succeeded struct {
				Episodes       int `json:"episodes"`
				RealJudged     int `json:"real_end_judged_success"`
				ImaginedJudged int `json:"imagined_end_judged_success"`
				// SwappedJudged is absent from scores made before it was measured.
				SwappedJudged *int `json:"swapped_end_judged_success"`
			} `json:"succeeded"`
		} `json:"imagined_endings"`
	} `json:"scores"`
}

// maxStrips is how many runs' real-vs-imagined strips the report shows under the pixel
// world-model table (the table links every run's).
const maxStrips = 3

// buildPixelWMView tabulates the runs' pretrained pixel world models: M_obs's imagined
// error at the first and last scored step against copying the last real frame (the bar a
// useful model clears), M_rew's success accuracy against the majority label's, and the
// run's real-vs-imagined strip. It returns nil when no run has one.
func buildPixelWMView(e *experimentData) *targetsView {
	t := tableView{Header: []string{"Run", "Episodes (train / held out)", "M_obs steps", "Imagined MSE, step 1 (copy last)",
		"Imagined MSE, last step (copy last)", "M_rew success accuracy (majority)", "Precision / recall",
		"Action effect, step 1", "Success endings judged: imagined / real of n", "M_rew imagined training frames", "Strip"}}
	var images [][2]string
	for _, r := range e.Runs {
		p := r.PixelWM
		if p == nil || p.Scores == nil {
			continue
		}
		s, im := p.Scores, p.Scores.Imagination
		mse := func(h int) string {
			if h < 0 || h >= len(im.MSE) || h >= len(im.CopyLastMSE) || im.Rollouts == 0 {
				return "—"
			}
			return fmt.Sprintf("%.4f (%.4f)", im.MSE[h], im.CopyLastMSE[h])
		}
		su := s.Reward.Success
		effect, endings := "—", "—"
		if len(im.ActionEffect) > 0 {
			effect = fmt.Sprintf("%.4f", im.ActionEffect[0])
		}
		if en := s.Endings; en != nil && en.Succeeded.Episodes > 0 {
			endings = fmt.Sprintf("%d / %d of %d", en.Succeeded.ImaginedJudged, en.Succeeded.RealJudged, en.Succeeded.Episodes)
			if sw := en.Succeeded.SwappedJudged; sw != nil {
				endings += fmt.Sprintf(" (another's actions: %d)", *sw)
			}
		}
		var extra []string
		if s.RewImagined > 0 {
			extra = append(extra, fmt.Sprintf("%d own endings", s.RewImagined))
		}
		if cf := p.RewCounterfactual; cf != nil && cf.Frames > 0 {
			extra = append(extra, fmt.Sprintf("%d counterfactual (%d of %d endings reached the goal)", cf.Frames, cf.Succeeded, cf.Endings))
		}
		imagined := "—"
		if len(extra) > 0 {
			imagined = strings.Join(extra, "; ")
		}
		strip := path.Join(r.Arm, fmt.Sprintf("seed-%d", r.Seed), runstore.PixelWorldModelStrip)
		if len(images) < maxStrips {
			images = append(images, [2]string{fmt.Sprintf("%s/seed-%d: real (upper) and imagined (lower) frames per camera", r.Arm, r.Seed), strip})
		}
		t.Rows = append(t.Rows, []cell{
			{Text: fmt.Sprintf("%s/seed-%d", r.Arm, r.Seed)},
			{Text: fmt.Sprintf("%d / %d", s.TrainEpisodes, s.HeldEpisodes), Num: true},
			{Text: fmt.Sprint(p.Config.ObsSteps), Num: true},
			{Text: mse(0), Num: true},
			{Text: mse(len(im.MSE) - 1), Num: true},
			{Text: fmt.Sprintf("%.3f (%.3f)", su.Accuracy, su.Majority), Num: true},
			{Text: fmt.Sprintf("%.2f / %.2f", su.Precision, su.Recall), Num: true},
			{Text: effect, Num: true},
			{Text: endings, Num: true},
			{Text: imagined},
			{Text: "PNG", Link: strip},
		})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	intro := []string{
		"Each run pretrained the pixel world model (the spec's world_model pixels block) on its offline episodes and scored it on one held-out episode in ten of every task.",
		"Imagined MSE is M_obs's open-loop error ([−1, 1] pixel units, mean over cameras and rollouts) when it imagines frames from real context frames with the recorded actions; in brackets the error of copying the last real frame, which a useful model must beat.",
		"M_rew's accuracy is at threshold ½ on every held-out frame; in brackets always answering the more frequent label.",
		"The action effect is how much M_obs's first imagined frame changes when another held-out episode's actions replace the recorded ones (mean squared difference; 0: it ignores its actions).",
		"Success endings judged: M_obs imagines the last steps before each held-out success from the real context with the recorded actions, and M_rew judges the imagined end frame and the real one; imagined successes that M_rew does not recognise give GRPO on imagined groups nothing to compare.",
		"In brackets the imagined end frames judged successes when another held-out episode's ending actions replace the recorded ones: as many as with the episode's own actions means M_rew's verdict is set by the start, not by what the policy does from it.",
		"M_rew's imagined training frames (world_model.pixels rew_imagined and rew_counterfactual) are M_obs's imaginations of training episodes' endings, labelled by the episode's own outcome or, driven by another episode's ending actions, by what the simulator says those actions did from that start.",
		"The strip shows, per camera, real frames over imagined ones (the first runs' strips below).",
	}
	return &targetsView{Heading: "Pixel world model", Intro: strings.Join(intro, " "), Table: t, Images: images}
}

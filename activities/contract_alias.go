package activities

import "github.com/accerl/accerl/activities/contract"

// The activities' Input and Result types and error types are defined in package contract,
// which the workflows import; these aliases keep the activity signatures readable.
type (
	TrainSegmentInput        = contract.TrainSegmentInput
	TrainSegmentResult       = contract.TrainSegmentResult
	FinishRunInput           = contract.FinishRunInput
	FinishRunResult          = contract.FinishRunResult
	CollectOfflineInput      = contract.CollectOfflineInput
	CollectOfflineResult     = contract.CollectOfflineResult
	PretrainWorldModelInput  = contract.PretrainWorldModelInput
	PretrainWorldModelResult = contract.PretrainWorldModelResult
	PretrainPolicyInput      = contract.PretrainPolicyInput
	PretrainPolicyResult     = contract.PretrainPolicyResult
	PrepareExperimentInput   = contract.PrepareExperimentInput
	PrepareExperimentResult  = contract.PrepareExperimentResult
	ReportInput              = contract.ReportInput
	ReportResult             = contract.ReportResult
)

// Error types of the activities' application errors (see package contract).
const (
	ErrTypeTraining = contract.ErrTypeTraining
	ErrTypeBadInput = contract.ErrTypeBadInput
)

// NonRetryableErrorTypes lists the error types Temporal must not retry by itself.
var NonRetryableErrorTypes = contract.NonRetryableErrorTypes

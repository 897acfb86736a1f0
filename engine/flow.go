package engine

import "github.com/hivemind-dev/hivemind/engine/flow"

// The pure state machine lives in engine/flow. Its types keep these names
// in engine too, for the runner and for callers that hand events and
// effects to it; its constants and functions are named from flow.

type (
	AgentHealth        = flow.AgentHealth
	AgentUsage         = flow.AgentUsage
	AppendEvent        = flow.AppendEvent
	ArchiveKnowledge   = flow.ArchiveKnowledge
	ArchiveTrigger     = flow.ArchiveTrigger
	CancelTimer        = flow.CancelTimer
	CheckpointMerged   = flow.CheckpointMerged
	Config             = flow.Config
	Effect             = flow.Effect
	Event              = flow.Event
	Inject             = flow.Inject
	HoldDelivery       = flow.HoldDelivery
	Withdraw           = flow.Withdraw
	InjectionResult    = flow.InjectionResult
	KeyPressed         = flow.KeyPressed
	KnowledgeSubmitted = flow.KnowledgeSubmitted
	Machine            = flow.Machine
	MergeCheckpoint    = flow.MergeCheckpoint
	MergeConflict      = flow.MergeConflict
	MergeKnowledge     = flow.MergeKnowledge
	NotifyUser         = flow.NotifyUser
	PlanDecision       = flow.PlanDecision
	ProjectSelected    = flow.ProjectSelected
	RestartAgent       = flow.RestartAgent
	Resumed            = flow.Resumed
	ScheduleTimer      = flow.ScheduleTimer
	SpawnAgent         = flow.SpawnAgent
	State              = flow.State
	StateNotSaved      = flow.StateNotSaved
	Stepper            = flow.Stepper
	StopAgent          = flow.StopAgent
	SubtaskDone        = flow.SubtaskDone
	TaskSubmitted      = flow.TaskSubmitted
	TimerFired         = flow.TimerFired
	TriggerCompleted   = flow.TriggerCompleted
	When               = flow.When
	WriteAssignment    = flow.WriteAssignment
	WriteState         = flow.WriteState
)

package engine

import "github.com/hivemind-dev/hivemind/engine/flow"

// The pure state machine lives in engine/flow; these names keep engine's
// API for the runner and the rest of the tree (issue 16: the boundary is the
// package, the callers need not change).

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

const (
	FromEvents       = flow.FromEvents
	InputPrefix      = flow.InputPrefix
	KeyAbandon       = flow.KeyAbandon
	KeyCancel        = flow.KeyCancel
	KeyPause         = flow.KeyPause
	KeyResume        = flow.KeyResume
	KeyRetry         = flow.KeyRetry
	MaxPlanDecision  = flow.MaxPlanDecision
	MaxTriggerBytes  = flow.MaxTriggerBytes
	NothingRecorded  = flow.NothingRecorded
	PlanDecisionFile = flow.PlanDecisionFile
)

var (
	ErrCannotResume    = flow.ErrCannotResume
	AssignmentFile     = flow.AssignmentFile
	DecodeEvent        = flow.DecodeEvent
	EncodeEvent        = flow.EncodeEvent
	FormatPlanDecision = flow.FormatPlanDecision
	InjectText         = flow.InjectText
	ParsePlan          = flow.ParsePlan
	RecoverState       = flow.RecoverState
)

package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Palette. Colours are chosen to read on dark and light backgrounds alike.
var (
	colAccent = lipgloss.Color("#7D56F4")
	colFocus  = lipgloss.Color("#00D7FF")
	colAttach = lipgloss.Color("#FF5FD7")
	colDim    = lipgloss.Color("#6C6C6C")
	colText   = lipgloss.Color("#D0D0D0")
	colSoft   = lipgloss.Color("#949494") // 7:1 on black, 3:1 on white
	colOK     = lipgloss.Color("#5FD75F")
	colBusy   = lipgloss.Color("#5FAFFF")
	colWarn   = lipgloss.Color("#FFAF00")
	colBad    = lipgloss.Color("#FF5F5F")
	colRate   = lipgloss.Color("#D787FF")
	colBlack  = lipgloss.Color("#000000")
	colWhite  = lipgloss.Color("#FFFFFF")
)

var (
	stDim       = lipgloss.NewStyle().Foreground(colDim)
	stText      = lipgloss.NewStyle().Foreground(colText)
	stAccent    = lipgloss.NewStyle().Foreground(colAccent).Bold(true)
	stBrand     = lipgloss.NewStyle().Foreground(colWhite).Background(colAccent).Bold(true)
	stHeaderKey = lipgloss.NewStyle().Foreground(colDim)
	stHeaderVal = lipgloss.NewStyle().Foreground(colText).Bold(true)
	stEventTime = lipgloss.NewStyle().Foreground(colDim)
	stEventType = lipgloss.NewStyle().Foreground(colBusy)
	stEventAgt  = lipgloss.NewStyle().Foreground(colAccent)
	stConfirm   = lipgloss.NewStyle().Foreground(colBlack).Background(colWarn).Bold(true)
	stAttachBar = lipgloss.NewStyle().Foreground(colBlack).Background(colAttach).Bold(true)
	stHelpBox   = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(colAccent).Padding(0, 1)
	// Help and footer keys: light on dark and dark on light terminals alike
	// (the help bubble's defaults are greys that vanish on dark themes).
	stHelpKey  = lipgloss.NewStyle().Foreground(colFocus).Bold(true)
	stHelpDesc = lipgloss.NewStyle().Foreground(colSoft)
	stHelpSep  = lipgloss.NewStyle().Foreground(colDim)
	stMatch    = lipgloss.NewStyle().Foreground(colBlack).Background(colWarn)
	stSelected = lipgloss.NewStyle().Reverse(true)
)

// phaseColor is the colour a workflow phase is shown in.
func phaseColor(p vocab.Phase) color.Color {
	switch p {
	case vocab.PhaseNeedsHuman, vocab.PhasePaused:
		return colWarn
	case vocab.PhaseError:
		return colBad
	case vocab.PhaseComplete:
		return colOK
	case vocab.PhaseCancelled:
		return colDim
	case vocab.PhaseIdle, vocab.PhaseProjectSelected, vocab.PhasePlanning, vocab.PhasePlanReview,
		vocab.PhasePlanRevision, vocab.PhasePlanApproval, vocab.PhaseExecuting, vocab.PhaseCheckpoint,
		vocab.PhaseCheckpointReview, vocab.PhaseCheckpointFix, vocab.PhaseFrictionLogged,
		vocab.PhaseFrictionSync, vocab.PhaseFrictionResolution:
		return colBusy
	}
	return colBusy // not started, or another version's phase
}

// healthLook is how one health value is drawn in a pane title.
type healthLook struct {
	glyph  string // shown before the label; "" means the spinner
	label  string
	colour color.Color
	alert  bool // colours the border of an unfocused pane
	strong bool
}

func lookOf(health vocab.Health) healthLook {
	switch health {
	case vocab.HealthBusy:
		return healthLook{label: "busy", colour: colBusy}
	case vocab.HealthStarting:
		return healthLook{label: "starting", colour: colWarn}
	case vocab.HealthReady, vocab.HealthIdle:
		return healthLook{glyph: "✓", label: string(health), colour: colOK}
	case vocab.HealthWaitingPermission:
		return healthLook{glyph: "⚠", label: "permission", colour: colWarn, alert: true, strong: true}
	case vocab.HealthRateLimited:
		return healthLook{glyph: "⏳", label: "rate limit", colour: colRate, alert: true, strong: true}
	case vocab.HealthHangWarning:
		return healthLook{glyph: "⚠", label: "no output", colour: colWarn, alert: true}
	case vocab.HealthHung:
		return healthLook{glyph: "✖", label: "hung", colour: colBad, alert: true, strong: true}
	case vocab.HealthExited:
		return healthLook{glyph: "⏻", label: "exited", colour: colDim}
	case vocab.HealthRestarting:
		return healthLook{glyph: "↻", label: "restarting", colour: colWarn}
	case "":
		return healthLook{glyph: "·", label: "no agent", colour: colDim}
	}
	return healthLook{glyph: "·", label: string(health), colour: colDim} // another version's
}

// spins reports whether a health value shows the spinner.
func spins(h vocab.Health) bool {
	return h == vocab.HealthBusy || h == vocab.HealthStarting
}

package flow

import (
	"fmt"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// RetryPolicy is the one rule every retry path of the engine follows:
// agent restarts (crash, hang, timeout, undelivered message), re-sends of
// rejected work (an invalid subtask or fix done marker), re-sends after a
// rate limit and reminders to a stalled agent. Failure n (1-based,
// consecutive, reset when the agent finishes its work) is retried after
// Delay(n); past Attempts retries the run goes to needs_human with the
// reason, so no agent can make Hivemind loop, or spend, without bound.
type RetryPolicy struct {
	// Attempts is how many retries are allowed (max_retries); 0 means
	// none: the first failure escalates.
	Attempts int
	// Backoff are the delays before retry 1, 2, …; the last repeats.
	// Empty means at once.
	Backoff []time.Duration
	// Limit names where Attempts comes from, for the message that gives
	// up; "" means the max_retries setting.
	Limit string
}

// limit is the rule the give-up message quotes: the setting with its
// value, or the policy's own Limit.
func (p RetryPolicy) limit() string {
	if p.Limit != "" {
		return p.Limit
	}
	return fmt.Sprintf("max_retries=%d", p.Attempts)
}

// Retry reports whether failure n (1-based) is retried, and after how long.
func (p RetryPolicy) Retry(n int) (after time.Duration, ok bool) {
	if n > p.Attempts {
		return 0, false
	}
	if len(p.Backoff) == 0 || n < 1 {
		return 0, true
	}
	return p.Backoff[min(n-1, len(p.Backoff)-1)], true
}

// restartPolicy governs agent restarts (and every failure that leads to
// one): max_retries restarts, after the configured backoff.
func (c Config) restartPolicy() RetryPolicy {
	return RetryPolicy{Attempts: c.MaxRetries, Backoff: c.Backoff}
}

// resendPolicy governs re-sends of work the agent got wrong (a rejected
// done marker, a turn lost to a rate limit, a stall): the first at once,
// so the agent hears what to fix while it has the context, then the
// configured backoff; max_retries in all.
func (c Config) resendPolicy() RetryPolicy {
	return RetryPolicy{Attempts: c.MaxRetries, Backoff: append([]time.Duration{0}, c.Backoff...)}
}

func resendTimer(agent vocab.AgentID) string { return "resend:" + string(agent) }

// retryWork re-sends agent's current assignment after failure n of kind
// (a rejected marker, a rate-limited turn, a stall), now or after the
// policy's backoff, or escalates to needs_human (escalation esc, with
// reason) once the policy is spent. It reports whether work was retried.
func (st *stepper) retryWork(p RetryPolicy, agent vocab.AgentID, esc, reason string, n int) bool {
	after, ok := p.Retry(n)
	if !ok {
		tries := fmt.Sprintf("%d retries", p.Attempts)
		if p.Attempts == 1 {
			tries = "1 retry"
		}
		st.needsHuman(esc, fmt.Sprintf("%s; gave up after %s (%s)", reason, tries, p.limit()))
		return false
	}
	if after <= 0 {
		st.cancelTimer(resendTimer(agent))
		st.resend(agent)
		return true
	}
	st.schedule(resendTimer(agent), after)
	st.emit(vocab.RecordResendScheduled, agent, map[string]any{"after": after.String(), "attempt": n, "reason": reason})
	return true
}

// Package agent owns the native agent loop: it sends the conversation to a
// model, runs the tool calls it asks for (asking an Approver first for gated
// tools), feeds the results back, and ends on a final answer, a bound, a
// question for the user, an interrupt or an error. It reports what happens
// as events and returns the whole conversation.
package agent

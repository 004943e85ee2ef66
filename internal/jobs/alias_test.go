package jobs_test

import "github.com/proctor-dev/proctor/internal/agent"

type (
	agentRequest  = agent.ApprovalRequest
	agentDecision = agent.Decision
)

// Package model owns talking to models: the OpenAI-compatible chat
// completions client (through the official openai-go SDK, streaming and not,
// with function tools), bounded retries with backoff and jitter, the failure
// domain and code of every error, the model profiles of models.yaml, and the
// record of every exchange.
package model

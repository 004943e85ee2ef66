// Package model owns talking to models: the OpenAI-compatible chat
// completions client (its wire format written and read here, streaming and
// not, with function tools; the official SDKs are test dependencies that
// check it), bounded retries with backoff and jitter, the failure
// domain and code of every error, the model profiles of models.yaml, and the
// record of every exchange.
package model

// Package script owns model scripts: the YAML file of ordered steps that a
// scripted model answers with (each step may state expectations on the
// request and gives a reply of text and/or tool calls), its parser with
// file:line:col errors, the OpenAI-compatible HTTP endpoints that serve
// scripts on loopback (one script, or many by path on one host), and the
// export of a recorded run back into a script.
package script

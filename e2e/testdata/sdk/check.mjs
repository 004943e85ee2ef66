// The official JavaScript SDKs of the four model APIs proctor serves, each
// against `proctor script serve` (e2e/testdata/sdk/script.yaml): plain and
// streamed, a tool call and its arguments (<, > and & kept), token counts,
// and the OpenAI Agents SDK's own tool loop. Run by TestTheOfficialSDKs
// (go tool task interop) as: node check.mjs HOST:PORT. Prints a line per
// call (ok or FAIL, milliseconds, what came back); exits 1 if any failed.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { Agent, run, tool, setDefaultOpenAIClient, setTracingDisabled, setOpenAIAPI } from "@openai/agents";
const addr = process.argv[2];
const results = [];
async function step(name, f) {
  const t0 = Date.now();
  try { const out = await f(); results.push([name, "ok", Date.now() - t0, out]); }
  catch (e) { results.push([name, "FAIL", Date.now() - t0, String(e)]); }
}
const fn = { type: "function", function: { name: "get_weather", description: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
const oa = new OpenAI({ baseURL: `http://${addr}/v1`, apiKey: "x", maxRetries: 0 });
await step("openai chat.completions", async () => {
  const r = await oa.chat.completions.create({ model: "scripted", messages: [{ role: "user", content: "chat plain" }], tools: [fn] });
  const m = r.choices[0].message; const c = m.tool_calls[0];
  if (JSON.parse(c.function.arguments).city !== "Paris <&>") throw new Error("args " + c.function.arguments);
  const r2 = await oa.chat.completions.create({ model: "scripted", tools: [fn], messages: [{ role: "user", content: "chat plain" }, m, { role: "tool", tool_call_id: c.id, content: "sunny" }] });
  if (r2.choices[0].message.content !== "chat tool ok") throw new Error(r2.choices[0].message.content);
  return `${m.content} / ${r2.choices[0].message.content}, usage ${r.usage.prompt_tokens}+${r.usage.completion_tokens}`;
});
await step("openai chat.completions stream", async () => {
  const s = await oa.chat.completions.create({ model: "scripted", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "chat stream" }], tools: [fn] });
  let text = "", args = "";
  for await (const ch of s) { const d = ch.choices[0]?.delta; if (d?.content) text += d.content; if (d?.tool_calls) args += d.tool_calls[0].function?.arguments ?? ""; }
  if (text !== "chat stream ok" || JSON.parse(args).city !== "Rome") throw new Error(text + " " + args);
  return text + " " + args;
});
await step("openai responses", async () => {
  const r = await oa.responses.create({ model: "scripted", input: "responses plain", tools: [{ type: "function", name: "get_weather", parameters: fn.function.parameters }] });
  const call = r.output.find((o) => o.type === "function_call");
  if (r.output_text !== "responses plain ok" || JSON.parse(call.arguments).city !== "Oslo") throw new Error(JSON.stringify(r.output));
  return r.output_text + " " + call.arguments;
});
await step("openai responses stream", async () => {
  const s = await oa.responses.create({ model: "scripted", input: "responses stream", stream: true });
  let text = ""; let done = false;
  for await (const ev of s) { if (ev.type === "response.output_text.delta") text += ev.delta; if (ev.type === "response.completed") done = true; }
  if (text !== "responses stream ok" || !done) throw new Error(text);
  return text;
});
const an = new Anthropic({ baseURL: `http://${addr}`, apiKey: "x", maxRetries: 0 });
const atool = { name: "get_weather", description: "weather", input_schema: fn.function.parameters };
await step("anthropic messages (+count_tokens)", async () => {
  const n = await an.messages.countTokens({ model: "scripted", messages: [{ role: "user", content: "messages plain" }] });
  const r = await an.messages.create({ model: "scripted", max_tokens: 100, messages: [{ role: "user", content: "messages plain" }], tools: [atool] });
  const tu = r.content.find((b) => b.type === "tool_use");
  if (r.content[0].text !== "messages plain ok" || tu.input.city !== "Lima") throw new Error(JSON.stringify(r.content));
  return `${r.content[0].text} ${JSON.stringify(tu.input)} stop=${r.stop_reason} count=${n.input_tokens}`;
});
await step("anthropic messages stream", async () => {
  const s = an.messages.stream({ model: "scripted", max_tokens: 100, messages: [{ role: "user", content: "messages stream" }], tools: [atool] });
  const m = await s.finalMessage();
  const tu = m.content.find((b) => b.type === "tool_use");
  if (m.content[0].text !== "messages stream ok" || tu.input.city !== "Kyiv") throw new Error(JSON.stringify(m.content));
  return `${m.content[0].text} ${JSON.stringify(tu.input)} usage=${m.usage.output_tokens}`;
});
const gg = new GoogleGenAI({ apiKey: "x", httpOptions: { baseUrl: `http://${addr}` } });
const gdecl = { functionDeclarations: [{ name: "get_weather", description: "weather", parameters: fn.function.parameters }] };
await step("google genai generateContent (+countTokens)", async () => {
  const n = await gg.models.countTokens({ model: "scripted", contents: "gemini plain" });
  const r = await gg.models.generateContent({ model: "scripted", contents: "gemini plain", config: { tools: [gdecl] } });
  if (r.text !== "gemini plain ok" || r.functionCalls[0].args.city !== "Rome") throw new Error(JSON.stringify(r.candidates));
  return `${r.text} ${JSON.stringify(r.functionCalls[0].args)} count=${n.totalTokens}`;
});
await step("google genai generateContentStream", async () => {
  const s = await gg.models.generateContentStream({ model: "scripted", contents: "gemini stream" });
  let text = ""; for await (const ch of s) text += ch.text ?? "";
  if (text !== "gemini stream ok") throw new Error(text);
  return text;
});
await step("openai agents run (Responses, tool loop)", async () => {
  setDefaultOpenAIClient(oa); setTracingDisabled(true); setOpenAIAPI("responses");
  const weather = tool({ name: "get_weather", description: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }, strict: true, execute: async ({ city }) => `sunny in ${city}` });
  const agent = new Agent({ name: "w", instructions: "answer", model: "scripted", tools: [weather] });
  const r = await run(agent, "agents sdk");
  if (r.finalOutput !== "agents sdk ok") throw new Error(String(r.finalOutput));
  return r.finalOutput;
});
for (const [n, s, ms, out] of results) console.log(`${s}\t${ms} ms\t${n}\t${out}`);
process.exit(results.every((r) => r[1] === "ok") ? 0 : 1);

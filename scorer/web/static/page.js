// The ranking page: POST /v1/explain then /v1/rerank on this origin, draw the answer. Where the
// service serves several models (GET /v1/models), a selector picks the one sent as "model"; where
// the chosen model has genre heads, another picks the one sent as "genre" ("general" first).
// Span offsets from the API count Unicode code points (Python str indices), so texts are cut
// with Array.from, never with String.slice (UTF-16 units differ on emoji).
"use strict";

const KIND_NAMES = {
  link_grammar_null: "null word",
  dependency_fragment: "fragment",
  constituency_fragment: "FRAG / X",
  lm_unlikely: "unlikely word",
  neural_unlikely: "unlikely to the neural LM",
  repeated_ngram: "repetition",
  symbol_debris: "symbols",
  said_again: "said again",
};
const FAMILY_NAMES = {
  "linkgrammar": "Link Grammar",
  "constituency": "constituency parse",
  "lm": "language model",
  "neural": "neural language model",
  "spacy": "dependency parse",
  "surface": "surface",
  "reading": "the text as a whole",
};
const METRIC_NAMES = {
  generation_tree_accuracy: "tree acc.",
  generation_string_accuracy: "string acc.",
  simple_tree_accuracy: "simple tree acc.",
  simple_string_accuracy: "simple string acc.",
  understandability_accuracy: "understandability",
  quality_accuracy: "quality",
  bleu: "BLEU",
  chrf: "chrF",
  nist: "NIST",
  dependency_f: "dependency F",
};
const BARS = 8;

const $ = (id) => document.getElementById(id);
let state = null; // {ranked, explanations, selected}
let served = []; // GET /v1/models: each model with its genres

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function fmt(x, digits = 3) {
  return x === null || x === undefined ? "n/a" : Number(x).toFixed(digits);
}

function signed(x, digits = 3) {
  return (x >= 0 ? "+" : "\u2212") + Math.abs(x).toFixed(digits);
}

async function post(path, body) {
  let resp;
  try {
    resp = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new Error(`The service could not be reached (${err.message}).`);
  }
  let data = null;
  try {
    data = await resp.json();
  } catch (_) {
    data = null;
  }
  if (!resp.ok) {
    // The page sends the candidates as /v1/explain's "sentences": name them as the user sees them.
    const detail = data && (data.detail || data.title || "").replace(
      /\b(sentences|candidates)\[(\d+)\]/g,
      (_, __, i) => `candidate ${Number(i) + 1}`,
    );
    throw new Error(detail ? `${data.title || "Error"}: ${detail}` : `The service answered ${resp.status}.`);
  }
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

// The text with its spans as <mark>s: cut at every span boundary, each piece marked with the
// reasons of the spans covering it; the reasons are a tooltip shown on hover and on focus.
function highlighted(text, spans, key) {
  const chars = Array.from(text);
  const cuts = new Set([0, chars.length]);
  for (const s of spans) {
    cuts.add(Math.max(0, Math.min(s.start, chars.length)));
    cuts.add(Math.max(0, Math.min(s.end, chars.length)));
  }
  const points = [...cuts].sort((a, b) => a - b);
  const out = el("span", { class: "hl" });
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i], points[i + 1]];
    const piece = chars.slice(a, b).join("");
    const covering = spans.filter((s) => s.start <= a && s.end >= b && s.end > s.start);
    if (!covering.length) {
      out.append(piece);
      continue;
    }
    const tipId = `tip-${key}-${i}`;
    const kinds = [...new Set(covering.map((s) => s.kind))];
    const mark = el("mark", {
      class: "span " + kinds.map((k) => "kind-" + k).join(" "),
      tabindex: "0",
      "aria-describedby": tipId,
      "data-kinds": kinds.join(" "),
      text: piece,
    });
    const tip = el("span", { class: "tip", role: "tooltip", id: tipId });
    for (const s of covering) {
      tip.append(el("span", { class: "tip-line", text: `${KIND_NAMES[s.kind] || s.kind}: ${s.detail}` }));
    }
    out.append(el("span", { class: "mark-wrap" }, mark, tip));
  }
  return out;
}

function accuracyCell(item, weights) {
  if (!item.accuracy) return el("span", { class: "muted", text: "no reference" });
  const names = Object.keys(weights).filter((n) => n !== "fluency");
  const shown = names.length ? names : ["generation_tree_accuracy", "chrf"];
  return el(
    "span",
    {},
    shown.map((n) => `${METRIC_NAMES[n] || n} ${fmt(item.accuracy[n], n === "chrf" || n === "bleu" ? 1 : 2)}`).join(" \u00b7 "),
  );
}

function featureLabel(name) {
  const [family, rest] = name.split("/");
  const base = family.replace(/\.v\d+$/, "");
  return `${FAMILY_NAMES[base] || base}: ${(rest || "").replaceAll("_", " ")}`;
}

function drawRanked() {
  const tbody = $("ranked").querySelector("tbody");
  tbody.replaceChildren();
  state.ranked.forEach((item, rank) => {
    const ex = state.explanations[item.index];
    const selected = rank === state.selected;
    const pick = el("button", {
      type: "button",
      class: "pick",
      "aria-pressed": String(selected),
      "aria-label": `Rank ${rank + 1}: show why`,
      text: String(rank + 1),
    });
    pick.addEventListener("click", () => select(rank));
    const row = el(
      "tr",
      { class: selected ? "selected" : "", "data-index": String(item.index) },
      el("td", { "data-label": "Rank" }, pick),
      el("td", { "data-label": "Candidate", class: "cand" }, highlighted(item.text, ex.spans, rank)),
      el("td", { "data-label": "Combined", class: "num", text: fmt(item.combined) }),
      el("td", { "data-label": "Fluency", class: "num", text: fmt(item.fluency) }),
      el("td", { "data-label": "Accuracy" }, accuracyCell(item, state.weights)),
    );
    tbody.append(row);
  });
}

function drawWhy() {
  const item = state.ranked[state.selected];
  const ex = state.explanations[item.index];
  $("why-title").textContent = `Why candidate ${state.selected + 1} scores ${fmt(ex.fluency)}`;
  $("why-text").replaceChildren(highlighted(item.text, ex.spans, "why"));
  const list = $("why-spans");
  list.replaceChildren();
  const chars = Array.from(item.text);
  for (const s of ex.spans) {
    list.append(
      el(
        "li",
        { class: "kind-" + s.kind },
        el("strong", { text: `\u201c${chars.slice(s.start, s.end).join("")}\u201d` }),
        ` ${KIND_NAMES[s.kind] || s.kind}: ${s.detail}`,
      ),
    );
  }
  if (!ex.spans.length) list.append(el("li", { class: "muted", text: "Nothing in this text is marked." }));

  const c = ex.contributions;
  const shown = c.features.slice(0, BARS);
  const rest = c.features.slice(BARS).reduce((t, f) => t + f.contribution, 0) + c.rest;
  const biggest = Math.max(1e-9, ...shown.map((f) => Math.abs(f.contribution)));
  const bars = $("bars");
  bars.replaceChildren();
  for (const f of shown) {
    const share = (50 * Math.abs(f.contribution)) / biggest;
    const bar = el("span", { class: "bar " + (f.contribution < 0 ? "neg" : "pos") });
    bar.style.width = `${share}%`;
    if (f.contribution < 0) bar.style.right = "50%";
    else bar.style.left = "50%";
    bars.append(
      el(
        "div",
        {
          class: "bar-row",
          role: "listitem",
          "aria-label": `${featureLabel(f.feature)}: ${signed(f.contribution, 2)} (value ${fmt(f.value)}, typical ${fmt(f.typical)})`,
        },
        el("span", { class: "bar-label", title: f.feature, text: featureLabel(f.feature) }),
        el("span", { class: "bar-track" }, bar),
        el("span", { class: "bar-value", text: signed(f.contribution, 2) }),
        el("span", { class: "bar-detail", text: `value ${fmt(f.value)}, typical ${fmt(f.typical)}` }),
      ),
    );
  }
  const how = c.exact
    ? "exact: the model is linear"
    : `approximate (${c.method}): the model is not linear, the parts miss the score by ${fmt(c.residual)}`;
  const calibrated = Math.abs(ex.gleu - ex.fluency) > 1e-9;
  // The parts add up to the score `explains` names: the fluency where the second stage is
  // linear (read back onto the features), else the GLEU score it calibrates.
  const onto = ex.explains === "fluency" ? ex.fluency : ex.gleu;
  let what = "the fluency score";
  if (calibrated && ex.explains === "fluency") {
    what = `the fluency, which is its calibration of the GLEU score ${fmt(ex.gleu)} and the features`;
  } else if (calibrated) {
    what = `the GLEU score (the fluency ${fmt(ex.fluency)} is its calibration)`;
  }
  $("bars-caption").textContent =
    `Contributions to ${what}, ${how}. Score ${fmt(onto)} = intercept ` +
    `${fmt(c.intercept)} + the ${shown.length} shown + ${fmt(rest)} from the other features` +
    (c.exact ? "." : ` + residual ${fmt(c.residual)}.`) +
    ` "Typical" is ${state.typical}.`;
}

function select(rank) {
  state.selected = rank;
  drawRanked();
  drawWhy();
  const button = $("ranked").querySelectorAll("button.pick")[rank];
  if (button) button.focus();
}

// The models served, as options of the selector; shown only when there is a choice.
async function loadModels() {
  let data = null;
  try {
    const resp = await fetch("/v1/models", { headers: { Accept: "application/json" } });
    if (resp.ok) data = await resp.json();
  } catch (_) {
    data = null;
  }
  const models = (data && data.models) || [];
  served = models;
  const select = $("model-select");
  select.replaceChildren();
  for (const m of models) {
    const notes = [];
    if (m.calibrated) notes.push(m.genre ? `calibrated for ${m.genre}` : "calibrated");
    if (m.default) notes.push("default");
    const option = el("option", { value: m.name, text: notes.length ? `${m.name} (${notes.join(", ")})` : m.name });
    if (m.summary) option.title = m.summary;
    option.selected = Boolean(m.default);
    select.append(option);
  }
  $("model-choice").hidden = models.length < 2;
  fillGenres();
}

// The chosen model's genre heads, "general" first, with their held-out agreement with people
// where the card reports it; shown only when the model has a head beside the general one. The
// one selected at first is the one the model scores with when a request names none.
function fillGenres() {
  const name = $("model-select").value;
  const model = served.find((m) => m.name === name) || served.find((m) => m.default) || served[0];
  const genres = (model && model.genres) || [];
  const names = genres.map((g) => g.name);
  const select = $("genre-select");
  select.replaceChildren();
  if (!names.includes("general")) select.append(el("option", { value: "", text: "general" }));
  for (const g of genres) {
    const held = g.held_out && g.held_out.rho !== null && g.held_out.rho !== undefined
      ? ` (held out: \u03c1 ${fmt(g.held_out.rho, 2)})`
      : "";
    select.append(el("option", { value: g.name, text: g.name + held }));
  }
  const own = model && names.includes(model.genre) ? model.genre : "general";
  select.value = names.includes(own) ? own : "";
  $("genre-choice").hidden = !names.some((n) => n !== "general");
}

function chosenModel() {
  return $("model-choice").hidden ? null : $("model-select").value || null;
}

function chosenGenre() {
  return $("genre-choice").hidden ? null : $("genre-select").value || null;
}

async function submit(event) {
  event.preventDefault();
  showError("");
  const candidates = $("candidates").value.split(/\r?\n/).map((s) => s.trim()).filter(Boolean);
  const reference = $("reference").value.trim();
  if (!candidates.length) {
    showError("Enter at least one candidate, one a line.");
    $("candidates").focus();
    return;
  }
  const button = $("rank");
  button.disabled = true;
  $("status").textContent = `Scoring ${candidates.length} candidate${candidates.length > 1 ? "s" : ""}\u2026`;
  try {
    const model = chosenModel();
    const genre = chosenGenre();
    const explain = { sentences: candidates, locate_nulls: true };
    const body = { candidates };
    if (model) explain.model = body.model = model;
    if (genre) explain.genre = body.genre = genre;
    const explained = await post("/v1/explain", explain);
    if (reference) body.references = [reference];
    const ranked = await post("/v1/rerank", body);
    state = {
      ranked: ranked.ranked,
      weights: ranked.weights,
      explanations: explained.explanations,
      typical: explained.typical,
      selected: 0,
    };
    $("model").textContent = `model ${ranked.model}`;
    $("genre-used").textContent = `, genre ${ranked.genre}`;
    $("results").hidden = false;
    drawRanked();
    drawWhy();
    $("status").textContent = `Ranked ${candidates.length} candidate${candidates.length > 1 ? "s" : ""}.`;
  } catch (err) {
    $("status").textContent = "";
    $("results").hidden = true;
    showError(err.message);
  } finally {
    button.disabled = false;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("form").addEventListener("submit", submit);
  $("model-select").addEventListener("change", fillGenres);
  loadModels();
  // Ctrl+Enter (or Cmd+Enter) in a box ranks, as the button does.
  for (const id of ["reference", "candidates"]) {
    $(id).addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("form").requestSubmit();
    });
  }
});

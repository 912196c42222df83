// Continuity chains: each final chain's scenes as cards, with the cues they share.
var C = D.chains, chainList = document.getElementById("chain-list");
var UNIT = !D.kind || D.kind === "screenplay" ? "Scene" : "Section";
var chainCounts = D.counts || {};
document.getElementById("chain-stats").textContent = C.length + " final chains" +
  (chainCounts.candidates !== undefined ? "; " + chainCounts.candidates + " candidate pairs of " + chainCounts.all_pairs + " scene pairs" : "");

function cueText(cue) {
  var unit = UNIT === "Scene" ? "sc" : "sec";
  return cue.type + ": " + cue.name + " \u2014 " + cue.spans.map(function (p) {
    return "\u201c" + p.surface + "\u201d (" + unit + " " + ((sceneById[p.section_id] || {}).n || "?") + ")";
  }).join(", ");
}

C.forEach(function (chain, i) {
  var card = el("div", { "class": "chain-card", "data-chain": chain.id });
  card.appendChild(el("b", {}, "Chain " + (i + 1) + " \u00b7 " + chain.scenes.length + " scenes \u00b7 " + chain.decision +
    (chain.coherence !== null ? " \u00b7 coherence " + Number(chain.coherence).toFixed(2) : "") + " \u00b7 " + chain.method));
  var cues = el("div", {});
  chain.cues.forEach(function (cue) { cues.appendChild(el("span", { "class": "cue" }, cueText(cue))); });
  card.appendChild(cues);
  var row = el("div", { "class": "scenes" });
  chain.scenes.forEach(function (id) {
    var s = sceneById[id] || { n: "?", heading: id, summary: "" };
    var sc = el("div", { "class": "scene-card" });
    sc.appendChild(el("b", {}, UNIT + " " + s.n + ": " + s.heading));
    sc.appendChild(el("span", {}, s.summary));
    row.appendChild(sc);
  });
  card.appendChild(row);
  if (chain.rationale) { card.appendChild(el("div", { "class": "muted" }, chain.rationale)); }
  chainList.appendChild(card);
});

if (D.kind && D.kind !== "screenplay") {
  document.getElementById("chain-note").appendChild(el("p", { "class": "note" },
    "Continuity chains apply to screenplays: they link scenes that can share a production setup (the same set, props " +
    "and cast state). This document is " + D.kind + ": its sections are not scenes to shoot, so any chains below only " +
    "group sections that share characters, places or objects."));
} else if (!C.length) {
  chainList.appendChild(el("p", { "class": "muted" }, "No continuity chains in this bundle."));
}

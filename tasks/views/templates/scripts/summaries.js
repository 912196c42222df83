// Summaries: the whole work's, then each storyline's in story order, beside the DAG above; every
// sentence is followed by the scene it quotes (or, written by a model, the scenes of the quotes it
// rests on), named as the continuity chains name scenes. A storyline's title zooms the DAG to it.
var SUM = D.summaries;

function sceneRef(id) {
  var s = sceneById[id], n = s ? s.n : "?";
  var ref = el("span", { "class": "scene-ref", "data-scene": id }, (UNIT === "Scene" ? "sc " : "sec ") + n);
  ref.addEventListener("mousemove", function (ev) {
    showTip(ev, [UNIT + " " + n + ": " + (s ? s.heading : id), s ? s.summary : ""]);
  });
  ref.addEventListener("mouseleave", hideTip);
  return ref;
}

function summaryParagraph(summary) {
  var p = el("p", { "class": "summary-text", "data-summary": summary.id });
  summary.sentences.forEach(function (sentence) {
    var span = el("span", { "class": "summary-sentence" });
    span.appendChild(document.createTextNode(sentence.text + " "));
    sentence.scenes.forEach(function (id) { span.appendChild(sceneRef(id)); span.appendChild(document.createTextNode(" ")); });
    p.appendChild(span);
  });
  return p;
}

// A summary the model wrote says so beside its title; one that stayed extractive is quotes.
var WRITTEN = "written by the model", summaryCount = 0, summaryWritten = 0;
function byModel(summary) {
  summaryCount += 1;
  summaryWritten += summary.method === "llm" ? 1 : 0;
  return summary.method === "llm" ? el("span", { "class": "muted" }, " (" + WRITTEN + ")") : null;
}
if (SUM.work) {
  var workBox = document.getElementById("work-summary"), workHead = el("h3", {}, "The whole work");
  var workMark = byModel(SUM.work);
  if (workMark) { workHead.appendChild(workMark); }
  workBox.appendChild(workHead);
  workBox.appendChild(summaryParagraph(SUM.work));
}
var storylineBox = document.getElementById("storyline-summaries");
if (SUM.storylines.length) { storylineBox.appendChild(el("h3", {}, "Storylines, in story order")); }
SUM.storylines.forEach(function (s) {
  var card = el("div", { "class": "storyline-summary" });
  var head = el("div", { "class": "storyline-head" });
  var lane = s.storyline;
  if (lane !== null && lane !== undefined) {
    head.appendChild(el("span", { "class": "swatch box", style: "background:" + STORYLINE_COLORS[lane % STORYLINE_COLORS.length] }));
    var link = el("a", { href: "#dag", title: "show this storyline in the DAG" },
      (s.origin ? s.origin + ": " : "") + s.title + " (" + G.storylines[lane].episodes.length + " episodes)");
    link.addEventListener("click", function () { showStoryline(lane); });
    head.appendChild(link);
  } else {
    head.appendChild(el("b", {}, (s.origin ? s.origin + ": " : "") + s.title));
  }
  var mark = byModel(s);
  if (mark) { head.appendChild(mark); }
  card.appendChild(head);
  card.appendChild(summaryParagraph(s));
  storylineBox.appendChild(card);
});
document.getElementById("summary-stats").textContent = (SUM.work ? "the work and " : "") + SUM.storylines.length +
  (SUM.storylines.length === 1 ? " storyline" : " storylines");
var QUOTED = "quote the story in story order", RESTS = "rest each sentence on quotes and name their scenes";
document.getElementById("summary-note").textContent = "Each sentence is followed by its scene (hover for it): " +
  (!summaryWritten ? "the summaries " + QUOTED : summaryWritten === summaryCount ? "the summaries, " + WRITTEN + ", " + RESTS
    : "summaries " + WRITTEN + " " + RESTS + "; the others " + QUOTED) + ".";

// After every section drew: the page's handles for tests and scripts, `#only-<section>`, and the
// `data-rendered` flag a headless browser waits for.
window.nkw = { graph: cy, dag: dag, search: search, swimlanePng: swimlanePng, showStoryline: showStoryline };
document.body.setAttribute("data-graph-nodes", String(cy.nodes().filter(function (n) { return !n.isParent(); }).length));
document.body.setAttribute("data-dag-nodes", String(dag.nodes().length));
var only = /^#only-(\w+)$/.exec(location.hash);
if (only && document.getElementById(only[1])) {
  document.body.classList.add("only");
  document.getElementById(only[1]).classList.add("shown");
  cy.resize();
  cy.fit(undefined, 24);
  sizeDagCanvas();
  dagStart();
}
if (location.hash === "#selftest") { document.body.setAttribute("data-png-bytes", String(swimlanePng().length)); }
document.body.setAttribute("data-rendered", "1");

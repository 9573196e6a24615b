// The report page's behaviour: draw every chart from the inlined data (plotly.js), switch a chart's figure,
// show or hide every row of a chart, and sort a table by the column whose header is clicked.
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["lasso2d", "select2d"] };

  function draw(div, spec) {
    return Plotly.newPlot(div, spec.data, spec.layout, config);
  }

  const pending = [];
  document.querySelectorAll("div.chart").forEach(function (div) {
    const spec = data.charts[div.id];
    pending.push(
      draw(div, spec).then(function () {
        div.dataset.drawn = String(spec.data.length);
      })
    );
  });
  Promise.all(pending).then(function () {
    document.body.dataset.chartsDrawn = String(pending.length);
  });

  document.querySelectorAll("select[data-chart]").forEach(function (select) {
    select.addEventListener("change", function () {
      const div = document.getElementById(select.dataset.chart);
      const spec = data.charts[div.id].variants[select.value];
      Plotly.react(div, spec.data, spec.layout, config);
    });
  });

  function setVisible(id, visible) {
    const div = document.getElementById(id);
    Plotly.restyle(div, { visible: visible });
  }
  document.querySelectorAll("button[data-show]").forEach(function (b) {
    b.addEventListener("click", function () { setVisible(b.dataset.show, true); });
  });
  document.querySelectorAll("button[data-hide]").forEach(function (b) {
    b.addEventListener("click", function () { setVisible(b.dataset.hide, "legendonly"); });
  });

  // sorting: numbers by value, text alphabetically; cells without a value ("-") stay last either way
  function sortValue(cell, numeric) {
    const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
    if (!numeric) return raw.toLowerCase();
    const m = /-?\d+(\.\d+)?/.exec(raw);
    return m ? parseFloat(m[0]) : null;
  }
  function sortBy(table, th) {
    const index = Array.prototype.indexOf.call(th.parentNode.children, th);
    const numeric = th.dataset.type === "number";
    const ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const body = table.tBodies[0];
    const rows = Array.prototype.slice.call(body.rows);
    const keyed = rows.map(function (row, i) {
      return { row: row, i: i, v: row.cells[index] ? sortValue(row.cells[index], numeric) : null };
    });
    keyed.sort(function (a, b) {
      if (a.v === null || a.v === "") return b.v === null || b.v === "" ? a.i - b.i : 1;
      if (b.v === null || b.v === "") return -1;
      const c = a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
      return (ascending ? c : -c) || a.i - b.i;
    });
    keyed.forEach(function (k) { body.appendChild(k.row); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    const head = table.tHead ? table.tHead.rows[0] : null;
    if (!head || !table.tBodies.length) return;
    Array.prototype.forEach.call(head.cells, function (th) {
      if (!th.dataset.type) th.dataset.type = /num|right/.test(th.className + th.style.textAlign) ? "number" : "text";
      th.addEventListener("click", function () { sortBy(table, th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th); }
      });
    });
  });
})();

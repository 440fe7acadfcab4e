(function () {
  var box = document.getElementById("progress");
  if (!box) return;
  var url = "/api/seasons/" + encodeURIComponent(box.dataset.season) + "/progress";
  // a ladder's page has no total, rate, ETA nor bar: its played matches and their pace an hour
  function set(id, text) {
    var e = document.getElementById(id);
    if (e) e.textContent = text;
  }
  function poll() {
    fetch(url).then(function (r) { return r.ok ? r.json() : null; }).then(function (p) {
      if (!p) return;
      set("p-done", p.done); set("p-total", p.total); set("p-running", p.running);
      set("p-pending", p.pending); set("p-failed", p.failed); set("p-status", p.status);
      set("p-rate", p.rate_per_min ? p.rate_per_min.toFixed(1) + "/min" : "-");
      set("p-eta", p.eta_s === null ? "-" : Math.round(p.eta_s) + " s");
      set("p-per-hour", p.per_hour == null ? "-" : p.per_hour.toFixed(1));
      var bar = document.getElementById("p-bar");
      if (bar) bar.style.width = (p.total ? 100 * p.done / p.total : 0) + "%";
    }).catch(function () {});
  }
  setInterval(poll, 2000);
})();

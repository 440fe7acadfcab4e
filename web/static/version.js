(function () {
  // A version's page while it is queued, building or checking: its state, polled every few
  // seconds from /me/bots/NAME/VERSION/state; once it is ready or refused, the page reloads
  // (its reason, build log and results).
  var box = document.getElementById("state");
  if (!box || !box.dataset.follow) return;
  var url = box.dataset.follow;
  var onItsWay = {queued: true, building: true, checking: true};
  function poll() {
    fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (v) {
        if (!v) return;
        box.textContent = v.state;
        box.className = "state state-" + v.state;
        var waiting = document.getElementById("waiting");
        if (waiting) waiting.textContent = v.waiting;
        if (onItsWay[v.state]) setTimeout(poll, 3000);
        else window.location.reload();
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  setTimeout(poll, 3000);
})();

"""The participants' domain, apart from HTTP: what an author may do and how often (``limits``),
who sees what (``visibility``) and the rules of scrimmages (``scrimmages``). The service's
routes (``web/``) and the workers both use it; a refusal says why (``scheduler.errors.Refused``
with a ``Refusal``), never an HTTP status."""

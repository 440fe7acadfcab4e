"""The participants' domain, apart from HTTP: the service's settings (``config``), what an
author may do and how often (``limits``), who sees what (``visibility``), who is asking
(``sessions``: tokens, logins, sessions), uploads (``uploads``), an author's versions
(``versions``), the rules of scrimmages (``scrimmages``), what its answers and their readers
share (``terms``) and the workers' side of it all (``intake``: checks, scrimmages opened, the
dispatcher). The service's routes (``web/``) and the workers both use it; a refusal says why
(``scheduler.errors.Refused`` with a ``Refusal``), never an HTTP status."""

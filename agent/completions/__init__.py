"""The OpenAI-compatible endpoint, /v1: any client of OpenAI's chat completions API (Open WebUI,
LibreChat, phone apps, the official SDKs) talks to Talorys as the model ``talorys`` (or as any
model the server lists; an answer names the model its request named, replies.model_named).

Each request runs a whole Talorys turn, as the chat page's do (agent/runner, agent/live): the
owner's memories and recall in the prompt, the tools under the token's scope, approvals and
budgets. The rooms: api.py (the NinjaAPI mounted at /v1/, its token auth and its errors),
admission.py (what is checked before anything is written), history.py (which conversation a
resent chat continues, and what of it is kept), replay.py (a request sent again gets the first
answer, not a second turn), replies.py (the turn's events as the content a client reads, with
its usage), schemas.py (OpenAI's bodies, and the parameters refused rather than ignored).
"""

"""The peers' own context-management code as recap strategies.

:mod:`recap_replay.adapters.langchain` needs the ``langchain`` extra
(``pip install 'recap-replay[langchain]'``); :mod:`recap_replay.adapters.openhands`
the ``openhands`` extra (the OpenHands SDK, CPython 3.12 or newer).
"""

"""The sandbox's routes, one module per area of the API, each declaring its endpoints once
(`endpoint.Endpoint`, collected in the module's `AREA`); `sandbox.app` serves them with
Starlette, and `sandbox.openapi` documents them.

Every endpoint says who may call it (its `side`: admin, client or open), the model of its body
and its typed parameters; its handler is given them validated, with the store (`endpoint.Call`).
"""

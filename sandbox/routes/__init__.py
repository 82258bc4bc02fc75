"""The sandbox's routes, one `APIRouter` per area of the API; `sandbox.app` includes them.

Every route reaches the store through one dependency (`deps.StoreDep`) and says who may call it
with `deps.Admin` or `deps.Client`.
"""

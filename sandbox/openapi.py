"""The OpenAPI document served at `/docs/openapi.json`, made from the endpoints' declarations
(`sandbox.routes.endpoint`): the operations, their parameters, bodies and answers, with every
model's JSON schema as pydantic writes it, under `components` (a model whose schema differs as
read and as written gets both, `-Input` and `-Output`, as FastAPI named them).

Made on the first request for it, not as the app is built: nothing else needs the schemas, and
the GUI waits for the sandbox's boot. `tests/sandbox/test_fuzz.py` holds the sandbox to it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode

from sandbox.routes.answers import TOKEN_ERRORS, Answer, errors
from sandbox.routes.endpoint import Area, Endpoint, Param, refused_in_maintenance

OPENAPI_VERSION = "3.1.0"
REF_TEMPLATE = "#/components/schemas/{model}"

#: a type named in the document, and whether as read (a request's) or as written (an answer's)
_Named = tuple[Any, JsonSchemaMode]


def document(
    areas: Sequence[Area], *, title: str, version: str, description: str
) -> dict[str, Any]:
    """The OpenAPI document of the endpoints of `areas`."""
    named: dict[_Named, TypeAdapter[Any]] = {}
    for area in areas:
        for endpoint in area.endpoints:
            body = endpoint.body or endpoint.reads_body
            if body is not None:
                named.setdefault((body, "validation"), TypeAdapter(body))
            for answer in _answers(endpoint).values():
                if answer.body is not None:
                    named.setdefault((answer.body, "serialization"), TypeAdapter(answer.body))
    schemas, definitions = GenerateJsonSchema(ref_template=REF_TEMPLATE).generate_definitions(
        [(kind, mode, adapter.core_schema) for (kind, mode), adapter in named.items()]
    )
    paths: dict[str, dict[str, Any]] = {}
    for area in areas:
        for endpoint in area.endpoints:
            operations = paths.setdefault(endpoint.path, {})
            operations[endpoint.method.lower()] = _operation(endpoint, area.tag, schemas)
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": title, "description": description, "version": version},
        "paths": paths,
        "components": {"schemas": dict(sorted(definitions.items()))},
    }


def _operation(
    endpoint: Endpoint[Any], area_tag: str | None, schemas: dict[_Named, Any]
) -> dict[str, Any]:
    name = endpoint.handler.__name__
    operation: dict[str, Any] = {}
    tag = endpoint.tag or area_tag
    if tag is not None:
        operation["tags"] = [tag]
    operation["summary"] = name.replace("_", " ").title()
    if endpoint.handler.__doc__:
        operation["description"] = inspect.cleandoc(endpoint.handler.__doc__)
    # named as FastAPI named them: the handler's name, the path and the method
    path_id = re.sub(r"\W", "_", f"{name}{endpoint.path}")
    operation["operationId"] = f"{path_id}_{endpoint.method.lower()}"
    declared = {param.name: param for param in endpoint.params}
    strings = [declared.get(n) or Param(n, "path", str) for n in endpoint.path_names]
    queries = [param for param in endpoint.params if param.where == "query"]
    parameters = [_parameter(param) for param in (*strings, *queries)]
    if parameters:
        operation["parameters"] = parameters
    body = endpoint.body or endpoint.reads_body
    if body is not None:
        operation["requestBody"] = {
            "content": {"application/json": {"schema": schemas[(body, "validation")]}},
            "required": True,
        }
    answers = _answers(endpoint)
    operation["responses"] = {
        str(code): _response(answers[code], schemas) for code in sorted(answers)
    }
    if endpoint.deprecated:
        operation["deprecated"] = True
    return operation


def _answers(endpoint: Endpoint[Any]) -> dict[int, Answer]:
    """What `endpoint` answers: what it declares, the token errors of its side, the 413 of a
    body past the limit (`sandbox.routes.endpoint.BODY_LIMIT`) when it reads one, and the 503
    of maintenance mode for an admin write (`refused_in_maintenance`)."""
    return {
        **(errors(*TOKEN_ERRORS) if endpoint.side != "open" else {}),
        **(errors(413) if endpoint.body is not None else {}),
        **(errors(503) if refused_in_maintenance(endpoint) else {}),
        **endpoint.answers,
    }


def _parameter(param: Param) -> dict[str, Any]:
    schema = {**param.adapter.json_schema(), "title": param.name.title()}
    if not param.required and param.default is not None:
        schema["default"] = param.default
    parameter = {"name": param.name, "in": param.where, "required": param.required,
                 "schema": schema}  # fmt: skip
    if param.description is not None:
        parameter["description"] = param.description
    return parameter


def _response(answer: Answer, schemas: dict[_Named, Any]) -> dict[str, Any]:
    if answer.schema is not None:
        content = {answer.media_type: {"schema": answer.schema}}
    elif answer.body is not None:
        content = {answer.media_type: {"schema": schemas[(answer.body, "serialization")]}}
    else:
        content = {}
    return {"description": answer.description, "content": content}

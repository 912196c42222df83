"""The pages `nkw serve` shows people: `/` lists the workspace's documents, `/view/<doc_id>` is the
page `nkw view` writes for one document, and `/docs` describes the API from its OpenAPI schema.

Every page is self-contained (no script, style or font from another site), so it works offline.
FastAPI's own `/docs` loads Swagger UI from a CDN; this one is server-side HTML instead.
"""

from __future__ import annotations

import json
from typing import Any, Callable
from urllib.parse import quote

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, select_autoescape

from tasks.tables.io import Workspace
from tasks.views.bundle import load_bundle
from tasks.views.html import render_page

METHODS = ("get", "post", "put", "patch", "delete")

_templates = Environment(
    loader=PackageLoader("flows.serving", "templates"), autoescape=select_autoescape(default=True)
)


def index_page(workspace_name: str, documents: list[dict[str, Any]]) -> str:
    """`/`: one row per document with a link to its view."""
    rows = [{**d, "href": f"/view/{quote(str(d['doc_id']), safe='')}"} for d in documents]
    return _templates.get_template("index.html").render(workspace=workspace_name, documents=rows)


def _schema_type(schema: dict[str, Any], components: dict[str, Any]) -> str:
    """A schema as a short type for people: `string`, `array of string`, `AskRequest`, `a | b`."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(_schema_type(option, components) for option in schema["anyOf"])
    if "enum" in schema:
        return " | ".join(json.dumps(value) for value in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    if schema.get("type") == "array":
        return f"array of {_schema_type(schema.get('items', {}), components)}"
    return str(schema.get("type", "any"))


LIMITS = {
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "default": "default {}",
}


def _limits(schema: dict[str, Any]) -> str:
    """A field's bounds and default in words (an optional field keeps its bounds inside `anyOf`)."""
    found = []
    for part in (schema, *schema.get("anyOf", [])):
        found += [text.format(json.dumps(part[key])) for key, text in LIMITS.items() if key in part]
    return "; ".join(found)


def _fields(schema: dict[str, Any], components: dict[str, Any]) -> list[dict[str, str]]:
    """The fields of an object schema (following one `$ref`), for a table."""
    if "$ref" in schema:
        schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "type": _schema_type(field, components),
            "required": "yes" if name in required else "",
            "limits": _limits(field),
            "description": field.get("description", ""),
        }  # fmt: skip
        for name, field in schema.get("properties", {}).items()
    ]


def _parameter(parameter: dict[str, Any]) -> dict[str, str]:
    return {
        "name": parameter["name"],
        "where": parameter.get("in", ""),
        "type": _schema_type(parameter.get("schema", {}), {}),
        "required": "yes" if parameter.get("required") else "",
    }


def endpoints(openapi: dict[str, Any]) -> list[dict[str, Any]]:
    """Each operation of an OpenAPI schema: method, path, summary, parameters, body fields, replies."""
    components = openapi.get("components", {}).get("schemas", {})
    found = []
    for path, operations in openapi.get("paths", {}).items():
        for method in METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            found.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": operation.get("summary", ""),
                    "description": operation.get("description", ""),
                    "parameters": [_parameter(p) for p in operation.get("parameters", [])],
                    "body": _schema_type(body["schema"], components) if "schema" in body else "",
                    "fields": _fields(body["schema"], components) if "schema" in body else [],
                    "responses": [
                        {"status": status, "description": reply.get("description", "")}
                        for status, reply in operation.get("responses", {}).items()
                    ],
                }
            )
    return found


def api_docs_page(openapi: dict[str, Any]) -> str:
    """`/docs`: every endpoint of the API with its request fields and replies, as plain HTML."""
    info = openapi.get("info", {})
    return _templates.get_template("api_docs.html").render(
        title=info.get("title", "API"), description=info.get("description", ""), endpoints=endpoints(openapi)
    )


def add_pages(app: FastAPI, workspace: Workspace, documents: Callable[[], list[dict[str, Any]]]) -> None:
    """Register `/`, `/view/<doc_id>` and `/docs` on `app` (made with docs_url=None, redoc_url=None)."""

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index() -> HTMLResponse:
        return HTMLResponse(index_page(workspace.root.name, documents()))

    @app.get("/view/{doc_id}", response_class=HTMLResponse, include_in_schema=False)
    def view(doc_id: str) -> HTMLResponse:
        if doc_id not in {str(d["doc_id"]) for d in documents()}:
            raise HTTPException(404, f"document {doc_id!r} is not in this workspace (see /)")
        return HTMLResponse(render_page(load_bundle(workspace, doc_id)))  # what `nkw view` writes

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(api_docs_page(app.openapi()))

// /docs: Swagger UI (PyPI's swagger-ui-py, embedded) on this server's /openapi.json, with "Try it
// out" aimed at this server whatever address it was reached at.
'use strict';
window.addEventListener('DOMContentLoaded', () => {
  fetch('/openapi.json').then(r => r.json()).then(spec => {
    spec.servers = [{url: location.origin, description: 'this server'}];
    window.ui = SwaggerUIBundle({
      spec,
      dom_id: '#swagger-ui',
      deepLinking: true,
      validatorUrl: null,  // no request leaves this server
      defaultModelsExpandDepth: 0,
      docExpansion: 'list',
    });
  });
});

// /docs: Swagger UI (PyPI's swagger-ui-py, embedded) on this server's /openapi.json.
'use strict';
window.addEventListener('DOMContentLoaded', () => {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    tryItOutEnabled: false,
    validatorUrl: null,  // no request leaves this server
    defaultModelsExpandDepth: 0,
    docExpansion: 'list',
  });
});

// The requests a `zrec view` answers (docs/json.md, "zrec view's API"): the guard's checks
// first (Host header, token; access_guard.h), then the page's static files or the JSON
// API. API errors are JSON objects {"error": "..."} with status 400 (a bad parameter or
// selection), 404 (no such PATH, stream, record or job), 405 (wrong method), 409 (a verify
// is running) or 500 (the store could not be read).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/view/access_guard.h"
#include "cli/view/byte_budget.h"
#include "cli/view/http_transport.h"
#include "cli/view/token_text.h"
#include "cli/view/verify_jobs.h"
#include "cli/view/view_catalog.h"

namespace zrec::cli::view {

class ViewRoutes : public HttpHandler {
 public:
  // `labels`: class names by stream name (view --labels), for the value histograms;
  // `vocabs`: vocabularies by stream name (view --vocab), for token records' text.
  ViewRoutes(Catalog& catalog, const AccessGuard& guard, VerifyJobs& jobs, ByteBudget& budget,
             std::map<std::string, LineList> labels = {}, Vocabularies vocabs = {})
      : catalog_(catalog),
        guard_(guard),
        jobs_(jobs),
        budget_(budget),
        labels_(std::move(labels)),
        vocabs_(std::move(vocabs)) {}

  void handle(const HttpRequest& request, HttpResponse& response) noexcept override;

 private:
  Status api(std::string_view route, const HttpRequest& request, HttpResponse& response);

  Catalog& catalog_;
  const AccessGuard& guard_;
  VerifyJobs& jobs_;
  ByteBudget& budget_;
  const std::map<std::string, LineList> labels_;
  const Vocabularies vocabs_;
};

}  // namespace zrec::cli::view

#include "command_line.h"

#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "common/repo_slug.h"

namespace issuescope::cli {
namespace {

// AddSearchTlsFlags adds the TLS flags of a command that reaches a search service (--server).
void AddSearchTlsFlags(CLI::App* command, ClientTlsFiles* tls) {
  command->add_option("--tls-ca", tls->ca,
                      "PEM CA (or self-signed certificate) of a TLS search service (--server)");
  command->add_option("--tls-cert", tls->cert,
                      "PEM client certificate, for a search service that requires one");
  command->add_option("--tls-key", tls->key, "PEM private key of --tls-cert");
}

// RegisterCrawlCommands adds `crawl` and `reparse`: the one-machine crawl into a data directory.
void RegisterCrawlCommands(CLI::App* app, CommandLine* line) {
  auto& crawl = line->crawl;
  auto* crawl_cmd = app->add_subcommand(
      "crawl", "crawl repositories into a data directory (one-machine mode); re-run to update");
  crawl_cmd->add_option("repos", crawl.repos, "repositories, e.g. github:pytorch/pytorch")
      ->required();
  crawl_cmd->add_option("--data", crawl.data_dir, "data directory")->required();
  crawl_cmd->add_option("--api-url", crawl.api_url, "API base URL (default: the tracker's)");
  crawl_cmd->add_option("--token-env", crawl.token_env,
                        "name of the environment variable holding the API token");
  crawl_cmd->add_flag("--full", crawl.full, "ignore cursors and crawl everything again");
  crawl_cmd->add_option("--parallel", crawl.parallel, "repositories crawled at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  crawl_cmd->add_flag("--no-pull-requests", line->no_pull_requests, "drop pull requests");
  for (issuescope::v1::Tracker kind : {issuescope::v1::TRACKER_GITHUB,
                                       issuescope::v1::TRACKER_GITLAB,
                                       issuescope::v1::TRACKER_GITEE}) {
    const std::string name = issuescope::TrackerName(kind);
    crawl_cmd->add_option("--" + name + "-api", crawl.api_urls[kind],
                          name + " API base URL (default: --api-url, else the tracker's)");
    crawl_cmd->add_option("--" + name + "-token-env", crawl.token_envs[kind],
                          "[ACCOUNT=]ENVVAR holding " + name + " token(s), comma-separated; "
                          "repeatable: all form one pool (default: --token-env)");
  }
  crawl_cmd->add_flag("--graphql", crawl.graphql,
                      "list GitHub issues over GraphQL: comments nested, charged to the token's "
                      "GraphQL budget; REST still confirms unchanged repositories (304s) and takes "
                      "over where GraphQL is not served or its budget is spent");
  crawl_cmd->add_option("--presence-sweep-h", crawl.presence_sweep_h,
                        "with --graphql: hours between presence sweeps of a repository, which "
                        "find deleted and transferred issues (0: every crawl; negative: never)");
  crawl_cmd->add_option("--presence-sweep-budget", crawl.presence_sweep_budget,
                        "with --graphql: a due presence sweep runs when listing the numbers costs "
                        "at most this share of the GraphQL points left (else it waits)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  crawl_cmd->add_option("--max-pages-per-lease", crawl.max_pages_per_lease,
                        "pages per lease before a crawl pauses and is leased again (0: no limit)");
  crawl_cmd->add_option("--gitee-budget", crawl.gitee_budget,
                        "requests per Gitee token and hour (Gitee sends no rate headers)");
  crawl_cmd->add_option("--secondary-backoff-s", line->secondary_backoff_s,
                        "first bench of a token after a secondary limit without Retry-After")
      ->check(CLI::NonNegativeNumber);

  auto& reparse = line->reparse;
  auto* reparse_cmd = app->add_subcommand(
      "reparse", "re-derive stored issues and comments from the kept raw pages (no re-crawl)");
  reparse_cmd->add_option("--data", reparse.data_dir, "data directory of `crawl`")->required();
  reparse_cmd->add_option("--repo", reparse.repo, "one repository (default: all)");
  // The subcommand chosen (RunCommand runs it).
  crawl_cmd->callback([line] { line->command = "crawl"; });
  reparse_cmd->callback([line] { line->command = "reparse"; });
}

// RegisterQueryCommands adds `search`, `export`, `table` and `show`: queries of an index or a search service.
void RegisterQueryCommands(CLI::App* app, CommandLine* line) {
  auto& search = line->search;
  auto* search_cmd = app->add_subcommand("search", "search the index (see docs/QUERY.md)");
  search_cmd->add_option("query", search.query, "query, e.g. '\"out of memory\" is:open'")
      ->required();
  search_cmd->add_option("--data", search.target.data_dir, "data directory of `crawl`");
  search_cmd->add_option("--server", search.target.server, "search service HOST:PORT, or its replicas HOST:PORT,HOST:PORT,… (calls fail over)");
  AddSearchTlsFlags(search_cmd, &search.target.tls);
  search_cmd->add_option("--limit", search.limit, "hits to print")->capture_default_str();
  search_cmd->add_flag("--json", search.json, "one JSON object per hit per line");
  search_cmd->add_flag("--explain", search.explain,
                       "show what each hit's score is made of (words in the text, title bonus, proximity)");
  search_cmd->add_option("--facets", search.facets,
                         "facets to count: repo,label,state,type,kind,theme,subtheme,llm,"
                         "author,year,tracker")
      ->delimiter(',');
  search_cmd->add_option("--facet-limit", search.facet_limit, "values printed per facet")
      ->capture_default_str()->check(CLI::Range(1, 1000));

  auto& export_options = line->export_options;
  auto* export_cmd = app->add_subcommand("export", "write every hit of a query as JSONL or CSV");
  export_cmd->add_option("query", export_options.query, "query (empty: every issue)");
  export_cmd->add_option("--data", export_options.target.data_dir, "data directory of `crawl`");
  export_cmd->add_option("--server", export_options.target.server, "search service HOST:PORT, or its replicas HOST:PORT,HOST:PORT,… (calls fail over)");
  AddSearchTlsFlags(export_cmd, &export_options.target.tls);
  export_cmd->add_option("--format", export_options.format, "jsonl or csv")
      ->capture_default_str()->check(CLI::IsMember({"jsonl", "csv"}));
  export_cmd->add_option("--out", export_options.out, "file to write (default: stdout)");
  export_cmd->add_option("--limit", export_options.limit, "at most this many hits (0: all)")
      ->capture_default_str();
  export_cmd->add_flag("--snippets", export_options.snippets, "include highlighted snippets");

  auto& table = line->table;
  auto* table_cmd = app->add_subcommand(
      "table", "count issues by kind, theme, repo, ... as a Markdown or CSV pivot table");
  table_cmd->add_option("--query", table.query, "query (default: every issue)");
  table_cmd->add_option("--by", table.by,
                        "1-3 of kind,theme,subtheme,repo,tracker,year,llm,state,type,label,"
                        "author; the last one becomes the columns")
      ->required()->delimiter(',');
  table_cmd->add_option("--format", table.format, "markdown or csv")
      ->capture_default_str()->check(CLI::IsMember({"markdown", "csv"}));
  table_cmd->add_option("--data", table.target.data_dir, "data directory of `crawl`");
  table_cmd->add_option("--server", table.target.server, "search service HOST:PORT, or its replicas HOST:PORT,HOST:PORT,… (calls fail over)");
  AddSearchTlsFlags(table_cmd, &table.target.tls);

  auto& show = line->show;
  auto* show_cmd = app->add_subcommand("show", "show one issue with its comments");
  show_cmd->add_option("issue", show.issue, "OWNER/NAME#N or github:OWNER/NAME#N")->required();
  show_cmd->add_option("--data", show.target.data_dir, "data directory of `crawl`");
  show_cmd->add_option("--server", show.target.server, "search service HOST:PORT, or its replicas HOST:PORT,HOST:PORT,… (calls fail over)");
  AddSearchTlsFlags(show_cmd, &show.target.tls);
  show_cmd->add_flag("--json", show.json, "print JSON");
  // The subcommand chosen (RunCommand runs it).
  search_cmd->callback([line] { line->command = "search"; });
  export_cmd->callback([line] { line->command = "export_options"; });
  table_cmd->callback([line] { line->command = "table"; });
  show_cmd->callback([line] { line->command = "show"; });
}

// RegisterClusterCommands adds `up`, `status` and the admin commands (`repos`, `trigger`, `drain`) of a cluster.
void RegisterClusterCommands(CLI::App* app, CommandLine* line) {
  auto& up = line->up;
  auto* up_cmd = app->add_subcommand(
      "up", "run the cluster as separate processes on loopback, over the tracker simulator");
  up_cmd->add_flag("--demo", up.demo, "run the demo (crawl, search, re-crawl) and exit");
  up_cmd->add_option("--workdir", up.work_dir, "work directory (default: a temporary one)");
  up_cmd->add_option("--workers", up.workers, "crawler workers")->capture_default_str()
      ->check(CLI::Range(1, 32));
  up_cmd->add_option("--repos", up.repos, "simulated repositories")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  up_cmd->add_option("--issues-per-repo", up.issues_per_repo, "simulated issues per repository")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  up_cmd->add_option("--comments-per-issue", up.comments_per_issue, "mean comments per issue")
      ->capture_default_str();
  up_cmd->add_option("--seed", up.seed, "simulator seed")->capture_default_str();

  auto& status = line->status;
  auto* status_cmd = app->add_subcommand("status", "show the coordinator's status");
  status_cmd->add_option("--coordinator", status.coordinator, "coordinator HOST:PORT")->required();
  status_cmd->add_flag("--json", status.json, "print JSON");
  status_cmd->add_flag("--watch", status.watch, "refresh every second");
  status_cmd->add_option("--token-env", status.token_env,
                         "environment variable holding the coordinator's admin token");
  status_cmd->add_option("--tls-ca", status.tls.ca, "PEM file of the CA the coordinator's TLS "
                                                     "certificate chains to (default: plaintext)");
  status_cmd->add_option("--tls-cert", status.tls.cert,
                         "PEM client certificate, for a coordinator with --tls-client-ca");
  status_cmd->add_option("--tls-key", status.tls.key, "PEM private key of --tls-cert");

  // Admin commands: change the coordinator's catalog and schedules.
  auto& admin = line->admin;
  auto add_admin = [&admin, line](CLI::App* parent, const std::string& name, const std::string& action,
                       const std::string& help, const std::string& args_help) {
    CLI::App* cmd = parent->add_subcommand(name, help);
    cmd->add_option("--coordinator", admin.target.coordinator, "coordinator HOST:PORT")
        ->required();
    cmd->add_option("--token-env", admin.target.token_env,
                    "environment variable holding the admin token");
    cmd->add_option("--tls-ca", admin.target.tls.ca, "PEM file of the coordinator's CA");
    cmd->add_option("--tls-cert", admin.target.tls.cert,
                    "PEM client certificate, for a coordinator with --tls-client-ca");
    cmd->add_option("--tls-key", admin.target.tls.key, "PEM private key of --tls-cert");
    cmd->add_option("args", admin.args, args_help);
    cmd->callback([line, action] {
      line->admin.action = action;
      line->command = "admin";
    });
    return cmd;
  };
  auto* repos_cmd = app->add_subcommand("repos", "add, remove, pause or resume repositories");
  auto* repos_add = add_admin(repos_cmd, "add", "add", "add repositories to the catalog",
                              "repositories (github:OWNER/NAME, gitlab:…, gitee:…)");
  repos_add->add_option("--api-url", admin.api_url, "API base URL of the tracker");
  repos_add->add_option("--recrawl-interval-s", admin.recrawl_interval_s,
                        "incremental re-crawl interval in seconds (0: only when triggered)");
  repos_add->add_option("--full-recrawl-interval-s", admin.full_recrawl_interval_s,
                        "full re-crawl interval in seconds (0: only when triggered)");
  repos_add->add_flag("!--no-pull-requests", admin.include_pull_requests,
                      "drop pull requests listed among the issues");
  add_admin(repos_cmd, "remove", "remove", "remove repositories from the catalog",
            "repositories");
  add_admin(repos_cmd, "pause", "pause", "pause crawling (none given: all)", "repositories");
  add_admin(repos_cmd, "resume", "resume", "resume crawling (none given: all)", "repositories");
  repos_cmd->require_subcommand(1);
  auto* trigger_cmd = add_admin(app, "trigger", "trigger", "re-crawl now (none given: all)",
                                "repositories");
  trigger_cmd->add_flag("--full", admin.full, "a full re-crawl instead of an incremental one");
  add_admin(app, "drain", "drain", "let a worker finish its leases and leave", "worker id");
  // The subcommand chosen (RunCommand runs it).
  up_cmd->callback([line] { line->command = "up"; });
  status_cmd->callback([line] { line->command = "status"; });
}

// RegisterTaxonomyCommands adds `taxonomy train|eval|cv|classify`: the issue classifier.
void RegisterTaxonomyCommands(CLI::App* app, CommandLine* line) {
  auto* taxonomy_cmd = app->add_subcommand(
      "taxonomy", "train, evaluate and run the issue classifier (see docs/TAXONOMY.md)");
  taxonomy_cmd->require_subcommand(1);
  // The training flags, shared by `train` and `cv`.
  auto add_train_flags = [](CLI::App* cmd, TaxonomyTrainOptions* o) {
    cmd->add_option("--taxonomy", o->taxonomy, "taxonomy file (default: llm-dl/1)");
    cmd->add_option("--also-train", o->also_train,
                    "more labelled files for training only (repeatable; never scored by cv)");
    cmd->add_option("--epochs", o->epochs, "training passes")->capture_default_str()
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--hash-bits", o->hash_bits, "feature buckets = 2^bits")
        ->capture_default_str()->check(CLI::Range(8, 24));
    cmd->add_option("--max-body-tokens", o->max_body_tokens, "body tokens used as features")
        ->capture_default_str();
    cmd->add_option("--learning-rate", o->learning_rate, "AdaGrad learning rate")
        ->capture_default_str();
    cmd->add_option("--l2", o->l2, "L2 penalty per update")->capture_default_str();
    cmd->add_option("--seed", o->seed, "seed of the example order and of the data splits")
        ->capture_default_str();
    cmd->add_option("--algorithm", o->algorithm, "logreg, naive-bayes or both")
        ->capture_default_str();
    cmd->add_option("--nb-alpha", o->nb_alpha, "naive Bayes smoothing")->capture_default_str();
    cmd->add_option("--title-char-ngrams", o->title_char_ngrams,
                    "character n-grams of title words (0: none)")
        ->capture_default_str()->check(CLI::Range(0, 8));
    cmd->add_option("--title-weight", o->title_weight,
                    "weight of the title's features against the body's")
        ->capture_default_str();
    cmd->add_flag("--signal-text-features", o->signal_text_features,
                  "model features over the body's prose and exception lines only");
    cmd->add_option("--ensemble", o->ensemble,
                    "logistic regression heads per field (seeds seed, seed+1, ...)")
        ->capture_default_str()->check(CLI::Range(1, 64));
  };
  // The classifier flags, shared by `eval` and `cv`.
  auto add_eval_flags = [](CLI::App* cmd, TaxonomyEvalOptions* o) {
    cmd->add_flag("--json", o->json, "print JSON");
    cmd->add_option("--positive", o->positive,
                    "score a binary detector, e.g. bug or bug.performance");
    cmd->add_option("--kind-cue-weight", o->kind_cue_weight,
                    "score of a matched kind cue next to the model probability")
        ->capture_default_str();
    cmd->add_option("--theme-model-weight", o->theme_model_weight,
                    "weight of the theme model's probability next to cue counts")
        ->capture_default_str();
    cmd->add_flag("--raw-body-cues", o->raw_body,
                  "taxonomy cues over the whole body, not only its prose and exception lines");
    cmd->add_option("--bootstrap", o->bootstrap,
                    "resamples of the 95% bootstrap intervals of accuracy and macro-F1 (0: none)")
        ->capture_default_str()->check(CLI::Range(0, 100000));
    cmd->add_option("--strong-symptom-weight", o->strong_symptom_weight,
                    "kind score of a strong bug symptom (two or more cues of one bug theme)")
        ->capture_default_str();
  };
  auto& tax_train = line->tax_train;
  auto* train_cmd = taxonomy_cmd->add_subcommand("train", "train a classifier model");
  train_cmd->add_option("--data", tax_train.data, "labelled issues, JSONL or CSV")->required();
  train_cmd->add_option("--out", tax_train.out, "model file to write")->required();
  train_cmd->add_option("--name", tax_train.name,
                        "the model's name, recorded with every tag it makes");
  train_cmd->add_flag("--compact", tax_train.compact,
                      "write the compact format (int8 weights, about a tenth of the JSON)");
  add_train_flags(train_cmd, &tax_train);
  train_cmd->add_option("--validation-fraction", tax_train.validation_fraction,
                        "hold out this fraction (chosen by --seed), train on the rest and "
                        "report the classifier's scores on it")
      ->capture_default_str()->check(CLI::Range(0.0, 0.95));
  auto& tax_eval = line->tax_eval;
  auto* eval_cmd = taxonomy_cmd->add_subcommand("eval", "evaluate against gold tags");
  eval_cmd->add_option("--data", tax_eval.data, "labelled issues, JSONL or CSV")->required();
  eval_cmd->add_option("--model", tax_eval.model,
                       "default (built in), none (rules and labels only) or a model file")
      ->capture_default_str();
  eval_cmd->add_option("--taxonomy", tax_eval.taxonomy, "taxonomy file (default: llm-dl/1)");
  add_eval_flags(eval_cmd, &tax_eval);
  auto& tax_cv = line->tax_cv;
  auto* cv_cmd = taxonomy_cmd->add_subcommand(
      "cv", "k-fold cross-validation within one labelled file (folds by repository if given)");
  cv_cmd->add_option("--data", tax_cv.data, "labelled issues, JSONL or CSV")->required();
  cv_cmd->add_option("--folds", tax_cv.folds, "number of folds")->capture_default_str()
      ->check(CLI::Range(2, 100));
  cv_cmd->add_flag("--ignore-repo", tax_cv.ignore_repo,
                   "stratified folds even when the records carry a repository");
  add_train_flags(cv_cmd, &tax_cv.train);
  add_eval_flags(cv_cmd, &tax_cv.eval);
  auto& tax_classify = line->tax_classify;
  auto* classify_cmd = taxonomy_cmd->add_subcommand("classify", "tag issues from a file");
  classify_cmd->add_option("--input", tax_classify.input, "issues, JSONL or CSV")->required();
  classify_cmd->add_option("--model", tax_classify.model,
                           "default (built in), none (rules and labels only) or a model file")
      ->capture_default_str();
  classify_cmd->add_option("--taxonomy", tax_classify.taxonomy,
                           "taxonomy file (default: llm-dl/1)");
  // The subcommand chosen (RunCommand runs it).
  train_cmd->callback([line] { line->command = "tax_train"; });
  eval_cmd->callback([line] { line->command = "tax_eval"; });
  cv_cmd->callback([line] { line->command = "tax_cv"; });
  classify_cmd->callback([line] { line->command = "tax_classify"; });
}

// RegisterReindexCommand adds `reindex`: re-tag the stored issues of a data directory's index.
void RegisterReindexCommand(CLI::App* app, CommandLine* line) {
  auto& reindex = line->reindex;
  auto* reindex_cmd = app->add_subcommand(
      "reindex", "re-tag the stored issues of a data directory's index (no re-crawl)");
  reindex_cmd->add_option("--data", reindex.data_dir, "data directory of `crawl`")->required();
  reindex_cmd->add_option("--taxonomy", reindex.taxonomy, "taxonomy file (default: llm-dl/1)");
  reindex_cmd->add_option("--model", reindex.model,
                          "default (built in), none (rules and labels only) or a model file")
      ->capture_default_str();
  reindex_cmd->add_option("--batch-size", reindex.batch_size, "documents per commit")
      ->capture_default_str()->check(CLI::PositiveNumber);
  reindex_cmd->add_flag("--force", reindex.force, "re-tag even if the tags look current");
  // The subcommand chosen (RunCommand runs it).
  reindex_cmd->callback([line] { line->command = "reindex"; });
}

// RegisterStudyCommands adds `study`: annotation studies (deploy/cli/study_command.h, docs/STUDY.md).
void RegisterStudyCommands(CLI::App* app, CommandLine* line) {
  auto* study_cmd = app->add_subcommand(
      "study", "sample, export, import, measure agreement, adjudicate and report (docs/STUDY.md)");
  study_cmd->require_subcommand(1);
  auto& study_sample = line->study_sample;
  auto* study_sample_cmd = study_cmd->add_subcommand(
      "sample", "draw a stratified, seeded sample of a query's issues into a study directory");
  study_sample_cmd->add_option("query", study_sample.query, "query (empty: every issue)");
  study_sample_cmd->add_option("--data", study_sample.target.data_dir, "data directory of `crawl`");
  study_sample_cmd->add_option("--server", study_sample.target.server, "search service HOST:PORT, or its replicas HOST:PORT,HOST:PORT,… (calls fail over)");
  AddSearchTlsFlags(study_sample_cmd, &study_sample.target.tls);
  study_sample_cmd->add_option("--out", study_sample.out, "study directory to create")->required();
  study_sample_cmd->add_option("--size", study_sample.size,
                               "sample size (default: from --confidence and --margin)");
  study_sample_cmd->add_option("--confidence", study_sample.confidence,
                               "confidence level of the size (Cochran)")->capture_default_str();
  study_sample_cmd->add_option("--margin", study_sample.margin, "margin of error of the size")
      ->capture_default_str();
  study_sample_cmd->add_option("--by", study_sample.by,
                               "strata: repo,tracker,kind,theme,llm,year,state")->delimiter(',');
  study_sample_cmd->add_option("--seed", study_sample.seed, "seed")->capture_default_str();
  study_sample_cmd->add_option("--taxonomy", study_sample.taxonomy,
                               "taxonomy file of the labels (default: llm-dl/1)");
  study_sample_cmd->add_flag("--force", study_sample.force, "replace a sample already in --out");
  auto& study_export = line->study_export;
  auto* study_export_cmd = study_cmd->add_subcommand(
      "export", "write the file annotators fill in, and the taxonomy's definitions");
  study_export_cmd->add_option("--sample", study_export.sample, "study directory")->required();
  study_export_cmd->add_option("--format", study_export.format, "csv or jsonl")
      ->capture_default_str()->check(CLI::IsMember({"csv", "jsonl"}));
  study_export_cmd->add_option("--out", study_export.out, "file to write")->required();
  study_export_cmd->add_flag("--show-tags", study_export.show_tags,
                             "show the index's tags (default: blind)");
  study_export_cmd->add_flag("--comments", study_export.comments, "append the comments");
  study_export_cmd->add_option("--data", study_export.target.data_dir,
                               "data directory (default: the sample's)");
  study_export_cmd->add_option("--server", study_export.target.server,
                               "search service HOST:PORT (default: the sample's)");
  AddSearchTlsFlags(study_export_cmd, &study_export.target.tls);
  auto& study_import = line->study_import;
  auto* study_import_cmd = study_cmd->add_subcommand(
      "import", "check annotators' label files against the taxonomy and store them");
  study_import_cmd->add_option("--sample", study_import.sample, "study directory")->required();
  study_import_cmd->add_option("files", study_import.files, "ANNOTATOR=FILE (CSV or JSONL)")
      ->required();
  auto& study_agreement = line->study_agreement;
  auto* study_agreement_cmd = study_cmd->add_subcommand(
      "agreement", "Cohen's, Fleiss' kappa and Krippendorff's alpha per field");
  study_agreement_cmd->add_option("--sample", study_agreement.sample, "study directory");
  study_agreement_cmd->add_option("--labels", study_agreement.labels,
                                  "ANNOTATOR=FILE label files (repeatable)");
  study_agreement_cmd->add_option("--taxonomy", study_agreement.taxonomy,
                                  "taxonomy file without --sample (default: llm-dl/1)");
  study_agreement_cmd->add_flag("--json", study_agreement.json, "print JSON");
  auto& study_adjudicate = line->study_adjudicate;
  auto* study_adjudicate_cmd = study_cmd->add_subcommand(
      "adjudicate", "write the disagreements to resolve; with --resolved, the training file");
  study_adjudicate_cmd->add_option("--sample", study_adjudicate.sample, "study directory")
      ->required();
  study_adjudicate_cmd->add_option("--out", study_adjudicate.out,
                                   "sheet (.csv or .jsonl), or with --resolved the labelled file")
      ->required();
  study_adjudicate_cmd->add_option("--resolved", study_adjudicate.resolved,
                                   "the sheet with its final columns filled in");
  auto& study_report = line->study_report;
  auto* study_report_cmd = study_cmd->add_subcommand(
      "report", "per-kind and per-theme population estimates with confidence intervals");
  study_report_cmd->add_option("--sample", study_report.sample, "study directory")->required();
  study_report_cmd->add_option("--labels", study_report.labels,
                               "final labels (default: the study's final.jsonl)");
  study_report_cmd->add_option("--confidence", study_report.confidence, "interval confidence")
      ->capture_default_str();
  study_report_cmd->add_flag("--json", study_report.json, "print JSON");
  // The subcommand chosen (RunCommand runs it).
  study_sample_cmd->callback([line] { line->command = "study_sample"; });
  study_export_cmd->callback([line] { line->command = "study_export"; });
  study_import_cmd->callback([line] { line->command = "study_import"; });
  study_agreement_cmd->callback([line] { line->command = "study_agreement"; });
  study_adjudicate_cmd->callback([line] { line->command = "study_adjudicate"; });
  study_report_cmd->callback([line] { line->command = "study_report"; });
}

}  // namespace

void RegisterCommands(CLI::App* app, CommandLine* line) {
  app->require_subcommand(1);
  app->add_option("--log-level", line->log_level, "trace, debug, info, warn, error, off")
      ->capture_default_str();
  RegisterCrawlCommands(app, line);
  RegisterQueryCommands(app, line);
  RegisterClusterCommands(app, line);
  RegisterTaxonomyCommands(app, line);
  RegisterReindexCommand(app, line);
  RegisterStudyCommands(app, line);
}

absl::Status RunCommand(const CommandLine& line) {
  if (line.command == "crawl") {
    CrawlCommandOptions crawl = line.crawl;
    crawl.include_pull_requests = !line.no_pull_requests;
    crawl.secondary_backoff = absl::Seconds(line.secondary_backoff_s);
    return RunCrawl(crawl);
  }
  if (line.command == "reparse") {
    return RunReparse(line.reparse);
  }
  if (line.command == "search") {
    return RunSearch(line.search);
  }
  if (line.command == "export_options") {
    return RunExport(line.export_options);
  }
  if (line.command == "table") {
    return RunTable(line.table);
  }
  if (line.command == "show") {
    return RunShow(line.show);
  }
  if (line.command == "up") {
    UpCommandOptions up = line.up;
    up.log_level = line.log_level;
    return RunUp(up);
  }
  if (line.command == "status") {
    return RunStatus(line.status);
  }
  if (line.command == "admin") {
    return RunAdmin(line.admin);
  }
  if (line.command == "tax_train") {
    return RunTaxonomyTrain(line.tax_train);
  }
  if (line.command == "tax_eval") {
    return RunTaxonomyEval(line.tax_eval);
  }
  if (line.command == "tax_cv") {
    return RunTaxonomyCv(line.tax_cv);
  }
  if (line.command == "tax_classify") {
    return RunTaxonomyClassify(line.tax_classify);
  }
  if (line.command == "reindex") {
    return RunReindex(line.reindex);
  }
  if (line.command == "study_sample") {
    return RunStudySample(line.study_sample);
  }
  if (line.command == "study_export") {
    return RunStudyExport(line.study_export);
  }
  if (line.command == "study_import") {
    return RunStudyImport(line.study_import);
  }
  if (line.command == "study_agreement") {
    return RunStudyAgreement(line.study_agreement);
  }
  if (line.command == "study_adjudicate") {
    return RunStudyAdjudicate(line.study_adjudicate);
  }
  if (line.command == "study_report") {
    return RunStudyReport(line.study_report);
  }
  return absl::InvalidArgumentError("no command given (see --help)");
}

}  // namespace issuescope::cli

#include "remote_registry.h"

#include "docid_sample.h"
#include "facets.h"
#include "remote_proximity.h"
#include "search/full_coverage.h"
#include "text_query.h"
#include "ranking_weight.h"

namespace issuescope::search {

Xapian::Registry RemoteRegistry() {
  Xapian::Registry registry;
  registry.register_weighting_scheme(RankingWeight());
  registry.register_match_spy(FacetCounter({}, 1));
  registry.register_match_spy(AggregateCounter({}));
  registry.register_posting_source(DocidSample(1, 1));
  registry.register_posting_source(ProximitySource({}, {}));
  registry.register_posting_source(KeyedDocsSource({}));
  registry.register_match_spy(DocumentCollector({}));
  RegisterFullCoverageSources(&registry);
  RegisterTextQuerySources(&registry);
  return registry;
}

}  // namespace issuescope::search

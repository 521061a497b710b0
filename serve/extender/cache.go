package extender

import (
	"container/list"
	"sync"
	"time"

	pb "github.com/drover-sched/drover/serve/proto"
)

// plan is the Core's placement of one job, as the extender uses it: how
// many of the job's tasks of each role it put on each node.
type plan struct {
	decisionID string
	policy     string
	reason     string
	placed     bool
	tasks      [2]map[string]int // by pb.Role: node name -> tasks there
	most       [2]int            // by pb.Role: the largest count
}

// newPlan reads a Place response.
func newPlan(resp *pb.PlaceResponse) *plan {
	p := &plan{decisionID: resp.GetDecisionId(), policy: resp.GetPolicy(), reason: resp.GetReason(), placed: resp.GetPlaced(),
		tasks: [2]map[string]int{{}, {}}}
	for _, a := range resp.GetAssignments() {
		r := a.GetRole()
		if r != pb.Role_ROLE_WORKER && r != pb.Role_ROLE_PS {
			continue
		}
		p.tasks[r][a.GetNodeId()]++
		p.most[r] = max(p.most[r], p.tasks[r][a.GetNodeId()])
	}
	return p
}

// count is the number of the role's tasks the plan puts on node.
func (p *plan) count(r pb.Role, node string) int { return p.tasks[r][node] }

// score scales the role's count on node to 0..10: 10 for the node with
// the most tasks, at least 1 for any node with one.
func (p *plan) score(r pb.Role, node string) int64 {
	c := p.count(r, node)
	if c == 0 || p.most[r] == 0 {
		return 0
	}
	s := (20*int64(c) + int64(p.most[r])) / (2 * int64(p.most[r])) // round(10 c / most)
	return max(1, min(s, 10))
}

// cache keeps each job's plan for a TTL, at most max jobs; when full it
// drops the oldest plan. It is safe for concurrent use.
type cache struct {
	ttl time.Duration
	max int

	mu    sync.Mutex
	byJob map[string]*list.Element // of *entry
	order *list.List               // oldest first
}

type entry struct {
	job string
	at  time.Time
	p   *plan
}

func newCache(ttl time.Duration, max int) *cache {
	return &cache{ttl: ttl, max: max, byJob: map[string]*list.Element{}, order: list.New()}
}

// get returns the job's plan if it is younger than the TTL at now.
func (c *cache) get(job string, now time.Time) (*plan, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(now)
	e, ok := c.byJob[job]
	if !ok {
		return nil, false
	}
	return e.Value.(*entry).p, true
}

// add stores the job's plan made at now and returns the job's plan: p,
// or the plan another request stored first (replace false), so that all
// the job's pods see one placement.
func (c *cache) add(job string, p *plan, now time.Time, replace bool) *plan {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(now)
	if e, ok := c.byJob[job]; ok {
		if !replace {
			return e.Value.(*entry).p
		}
		c.order.Remove(e)
		delete(c.byJob, job)
	}
	for c.order.Len() >= c.max {
		c.drop(c.order.Front())
	}
	c.byJob[job] = c.order.PushBack(&entry{job: job, at: now, p: p})
	return p
}

// len returns the number of plans held.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// expire drops the plans older than the TTL; they are at the front.
func (c *cache) expire(now time.Time) {
	for f := c.order.Front(); f != nil && now.Sub(f.Value.(*entry).at) >= c.ttl; f = c.order.Front() {
		c.drop(f)
	}
}

func (c *cache) drop(e *list.Element) {
	c.order.Remove(e)
	delete(c.byJob, e.Value.(*entry).job)
}

/**
 * The order in which a request tries a model's routes (issue #5). Routes are fallbacks in YAML
 * order; adjacent routes that carry a `weight` form a group whose order is drawn per request,
 * each route first with probability weight / group total (weighted sampling without
 * replacement), so `[{a, weight: 3}, {b, weight: 1}, {c}]` starts at a 75% of the time, then the
 * other of a and b, then c.
 */
export function orderRoutes<T extends { readonly weight: number | null }>(routes: readonly T[], random: () => number = Math.random): T[] {
  if (!routes.some((r) => r.weight !== null)) return routes as T[];
  const ordered: T[] = [];
  let group: T[] = [];
  const flush = (): void => {
    while (group.length > 0) {
      const total = group.reduce((sum, r) => sum + (r.weight ?? 0), 0);
      let pick = random() * total;
      let index = group.findIndex((r) => (pick -= r.weight ?? 0) < 0);
      if (index === -1) index = group.length - 1;
      ordered.push(...group.splice(index, 1));
    }
  };
  for (const route of routes) {
    if (route.weight === null) {
      flush();
      ordered.push(route);
    } else {
      group.push(route);
    }
  }
  flush();
  return ordered;
}
